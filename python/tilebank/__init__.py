"""tilebank's Python side: the PyTorch adapter for gradient fusion tuning (GDAT).

The search, the bank and the result files are the tilebank command line's (C++); this package
records what they plan from (tilebank.gradient_profile) and applies their plans in a training job.
"""
