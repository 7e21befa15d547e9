"""``omnitensor.optim``: optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) and
``lr_scheduler``. Updates run in place under no_grad on each parameter's device."""
from . import lr_scheduler  # noqa: F401
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
