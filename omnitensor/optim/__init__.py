"""``omnitensor.optim``: optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax,
NAdam, RAdam, ASGD, Rprop, LBFGS, SparseAdam) and ``lr_scheduler``. Updates run in place
under no_grad on each parameter's device."""
from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam
from .swap import swap_in_optimizer_params_and_state

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler",
           "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS", "SparseAdam",
           "Adafactor", "Muon", "swap_in_optimizer_params_and_state", "swa_utils"]
