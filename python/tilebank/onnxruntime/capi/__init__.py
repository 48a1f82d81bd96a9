"""ONNX Runtime's capi package layout, for scripts that import its submodules: the same objects as
tilebank.onnxruntime."""
