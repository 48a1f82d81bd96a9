"""Small ONNX models the API tests run and tune, written with python3-onnx."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def matmul_relu(path, batch="batch", k=64, n=32, seed=0):
    """y = Relu(x @ W + b), x: [batch, k] float32 (batch dynamic when a string)."""
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal((n,)).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["mm"], name="mm"), helper.make_node("Add", ["mm", "b"], ["biased"], name="bias"),
             helper.make_node("Relu", ["biased"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "matmul_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, n])], [w, b])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path), (w, b)


def token_embedding(path, vocab=50, dim=8):
    """y = Gather(E, ids), ids: [1, seq] int64: an input that is not float32."""
    e = numpy_helper.from_array(np.arange(vocab * dim, dtype=np.float32).reshape(vocab, dim), "E")
    graph = helper.make_graph([helper.make_node("Gather", ["E", "ids"], ["y"], name="gather")], "embed",
                              [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5, dim])], [e])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def conv_relu(path):
    """A Conv+Relu subgraph SGAT tunes."""
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((16, 8, 3, 3)).astype(np.float32), "W")
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "conv_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 16, 16])], [w])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def sequence_model(path):
    """A sequence input `s` (float32 tensors [2, 3]) and an optional `o`: n = SequenceLength(s),
    c = ConcatFromSequence(s, axis 0), has = OptionalHasElement(o), parts = SplitToSequence(c) (a
    sequence output)."""
    seq = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2, 3])
    opt = helper.make_value_info("o", helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [3])))
    nodes = [helper.make_node("SequenceLength", ["s"], ["n"]), helper.make_node("ConcatFromSequence", ["s"], ["c"], axis=0),
             helper.make_node("OptionalHasElement", ["o"], ["has"]), helper.make_node("SplitToSequence", ["c"], ["parts"], axis=0)]
    outputs = [helper.make_tensor_value_info("n", TensorProto.INT64, []), helper.make_tensor_value_info("c", TensorProto.FLOAT, ["rows", 3]),
               helper.make_tensor_value_info("has", TensorProto.BOOL, []), helper.make_tensor_sequence_value_info("parts", TensorProto.FLOAT, [1, 3])]
    graph = helper.make_graph(nodes, "sequences", [seq, opt], outputs)
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
