"""The op table: each module holds a family of ops, each op's dtype rule, shape rule,
forward and backward in one place."""
