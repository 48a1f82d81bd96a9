"""Small ONNX models the tests of tilebank.onnxruntime open, written with python3-onnx."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from models import save

W = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)


def mul_by_w(path):
    """Y = X * W (W a [3, 2] initializer), X: [3, 2] float32; metadata for get_modelmeta."""
    graph = helper.make_graph([helper.make_node("Mul", ["X", "W"], ["Y"], name="mul")], "mul_graph",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 2])], [numpy_helper.from_array(W, "W")],
                              doc_string="the graph's description")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ort_models.py",
                              producer_version="1.0", domain="tilebank.test", model_version=7, doc_string="the model's description")
    helper.set_model_props(model, {"author": "tilebank", "purpose": "tests"})
    return save(model, path)


def dynamic_matmul(path):
    """Y = Relu(X @ M + b), X: ["batch" (denotation DATA_BATCH), 4] float32, with a second output Z = X + 1
    and an unnamed dynamic dim on Z."""
    rng = np.random.default_rng(3)
    m = numpy_helper.from_array(rng.standard_normal((4, 5)).astype(np.float32), "M")
    b = numpy_helper.from_array(rng.standard_normal((5,)).astype(np.float32), "b")
    one = numpy_helper.from_array(np.ones((1,), np.float32), "one")
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 4])
    x.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    z = helper.make_tensor_value_info("Z", TensorProto.FLOAT, [None, 4])
    nodes = [helper.make_node("MatMul", ["X", "M"], ["mm"]), helper.make_node("Add", ["mm", "b"], ["s"]),
             helper.make_node("Relu", ["s"], ["Y"]), helper.make_node("Add", ["X", "one"], ["Z"])]
    graph = helper.make_graph(nodes, "dynamic", [x], [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 5]), z],
                              [m, b, one])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def strings_and_bools(path):
    """S2 = Identity(S) (strings [2, 2]), A = And(P, Q) (bool [2])."""
    nodes = [helper.make_node("Identity", ["S"], ["S2"]), helper.make_node("And", ["P", "Q"], ["A"])]
    graph = helper.make_graph(nodes, "typed", [helper.make_tensor_value_info("S", TensorProto.STRING, [2, 2]),
                                               helper.make_tensor_value_info("P", TensorProto.BOOL, [2]),
                                               helper.make_tensor_value_info("Q", TensorProto.BOOL, [2])],
                              [helper.make_tensor_value_info("S2", TensorProto.STRING, [2, 2]),
                               helper.make_tensor_value_info("A", TensorProto.BOOL, [2])])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def with_ort_config(path, config_json):
    """mul_by_w with ONNX Runtime's "ort_config" metadata (ORT_LOAD_CONFIG_FROM_MODEL)."""
    import onnx
    model = onnx.load(mul_by_w(path))
    helper.set_model_props(model, {"ort_config": config_json})
    return save(model, path)


def scalars_and_types(path):
    """y = s * Cast(n) (s: float32 [], n: int64 []), h2 = Identity(h) (h: float16 [2])."""
    nodes = [helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT), helper.make_node("Mul", ["s", "nf"], ["y"]),
             helper.make_node("Identity", ["h"], ["h2"])]
    graph = helper.make_graph(nodes, "scalars", [helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
                                                 helper.make_tensor_value_info("n", TensorProto.INT64, []),
                                                 helper.make_tensor_value_info("h", TensorProto.FLOAT16, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, []),
                               helper.make_tensor_value_info("h2", TensorProto.FLOAT16, [2])])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def mul_by_w_ir(path, ir_version, w_listed):
    """mul_by_w at an older IR version, W listed among the graph's inputs or not (IR 3 required it;
    ONNX's checker refuses the model otherwise, ONNX Runtime reads it): written without the checker."""
    import onnx
    graph = helper.make_graph([helper.make_node("Mul", ["X", "W"], ["Y"])], "old",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 2])]
                              + ([helper.make_tensor_value_info("W", TensorProto.FLOAT, [3, 2])] if w_listed else []),
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 2])], [numpy_helper.from_array(W, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)])
    model.ir_version = ir_version
    onnx.save(model, str(path))
    return str(path)


def mul_by_w_external(path):
    """mul_by_w with W in an external data file beside the model."""
    import onnx
    model = onnx.load(mul_by_w(path))
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    return str(path)
