"""The seeded example inputs the user-model builders (scripts/user_models*.py) export their models
with: the same values on every run and machine."""
import torch


def seeded(*shape):
    """Normal floats of `shape` from seed 1."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(1))


def random_ids(high, shape, seed):
    """int64 ids in [0, high) of `shape` from `seed`."""
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed))
