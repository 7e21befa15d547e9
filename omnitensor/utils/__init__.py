"""Small helpers shared across layers (hook handles); ``omnitensor.utils.data`` is the data
package under its torch name."""
