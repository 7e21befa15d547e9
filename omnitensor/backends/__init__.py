"""Device adapters, one per vendor stack, found through a lazy registry
(``registry.BACKENDS``): nothing here imports CuPy, PyOpenCL or dpnp until a device of that
type is used. The contract every adapter implements is ``base.Backend``. torch's
``torch.backends`` flag modules (``cudnn``, ``mps``...) are not here: they are the face
package ``omnitensor.torch_backends``."""
