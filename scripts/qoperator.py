"""ONNX Runtime's QOperator format, written for the zoo without ONNX Runtime's Python quantizer:
a float CNN's ONNX model (Conv, Relu, MaxPool, Add, GlobalAveragePool, Flatten, Gemm, Identity of weights, as torch.onnx
writes ResNets with each BatchNormalization folded into its Conv) becomes what
`onnxruntime.quantization.quantize_static(..., quant_format=QuantFormat.QOperator,
per_channel=True)` writes for it: QuantizeLinear of the input, ONNX's QLinearConv (int8 weights
per output channel, int32 bias), MaxPool and Flatten on the 8-bit tensors, com.microsoft's
QLinearAdd, QLinearGlobalAveragePool and QGemm, a Relu folded into the range of the output before
it, and DequantizeLinear of the logits. Activations are uint8, asymmetric, over the min and max
each tensor takes on the calibration inputs, which a small numpy evaluator of those ops computes.

  import qoperator
  qoperator.quantize(float_model_path, [calibration input arrays], out_path)
"""
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _conv(x, w, b, a):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    group = a.get("group", 1)
    sh, sw = a.get("strides", [1, 1])
    dh, dw = a.get("dilations", [1, 1])
    pt, pl, pb, pr = a.get("pads", [0, 0, 0, 0])
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    y = np.empty((n, m, oh, ow), np.float32)
    mg = m // group
    for g in range(group):
        cols = np.empty((n, cg, kh, kw, oh, ow), np.float32)
        for i in range(kh):
            for j in range(kw):
                cols[:, :, i, j] = xp[:, g * cg:(g + 1) * cg, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
        y[:, g * mg:(g + 1) * mg] = np.einsum("nckl...,mckl->nm...", cols, w[g * mg:(g + 1) * mg])
    return y + (b.reshape(1, -1, 1, 1) if b is not None else 0)


def _maxpool(x, a):
    kh, kw = a["kernel_shape"]
    sh, sw = a.get("strides", [1, 1])
    pt, pl, pb, pr = a.get("pads", [0, 0, 0, 0])
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=-np.inf)
    oh = (x.shape[2] + pt + pb - kh) // sh + 1
    ow = (x.shape[3] + pl + pr - kw) // sw + 1
    y = np.full(x.shape[:2] + (oh, ow), -np.inf, np.float32)
    for i in range(kh):
        for j in range(kw):
            y = np.maximum(y, xp[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw])
    return y


def evaluate(model, inputs):
    """Every value of `model` on `inputs` (name -> array)."""
    values = dict(inputs)
    values.update({t.name: numpy_helper.to_array(t).astype(np.float32) for t in model.graph.initializer})
    for node in model.graph.node:
        a, x = _attrs(node), [values[i] if i else None for i in node.input]
        t = node.op_type
        if t == "Conv":
            y = _conv(x[0], x[1], x[2] if len(x) > 2 else None, a)
        elif t == "Relu":
            y = np.maximum(x[0], 0)
        elif t == "MaxPool":
            y = _maxpool(x[0], a)
        elif t == "Add":
            y = x[0] + x[1]
        elif t == "GlobalAveragePool":
            y = x[0].mean(axis=(2, 3), keepdims=True)
        elif t == "Flatten":
            y = x[0].reshape(x[0].shape[0], -1)
        elif t == "Identity":
            y = x[0]
        elif t == "Gemm":
            b = x[1].T if a.get("transB", 0) else x[1]
            y = a.get("alpha", 1.0) * x[0] @ b + (a.get("beta", 1.0) * x[2] if len(x) > 2 else 0)
        else:
            raise ValueError(f"qoperator: {t} is not one of the ops this writes in QOperator form")
        values[node.output[0]] = y.astype(np.float32)
    return values


def _activation_params(low, high):
    low, high = min(low, 0.0), max(high, 0.0)
    scale = (high - low) / 255 if high > low else 1.0
    return np.float32(scale), np.uint8(np.clip(round(-low / scale), 0, 255))


def quantize(float_path, calibration, out_path):
    model = onnx.load(float_path)
    graph = model.graph
    input_name, output_name = graph.input[0].name, graph.output[0].name
    ranges = {}
    for x in calibration:
        for name, v in evaluate(model, {input_name: x}).items():
            low, high = ranges.get(name, (np.inf, -np.inf))
            ranges[name] = (min(low, float(v.min())), max(high, float(v.max())))
    weights = {t.name: numpy_helper.to_array(t).astype(np.float32) for t in graph.initializer}
    for node in graph.node:  # torch.onnx's Identity of a shared initializer (a zero bias)
        if node.op_type == "Identity" and node.input[0] in weights:
            weights[node.output[0]] = weights[node.input[0]]
    readers = {}
    for node in graph.node:
        for i in node.input:
            readers.setdefault(i, []).append(node)
    inits, nodes, quantized = [], [], {}  # float value -> (uint8 value, scale name, zero point name)

    def params(value, name):
        scale, zero = _activation_params(*ranges[value])
        inits.extend([numpy_helper.from_array(np.array(scale), name + "_scale"), numpy_helper.from_array(np.array(zero), name + "_zero_point")])
        return name + "_scale", name + "_zero_point"

    def folded_relu(node):
        """The Relu reading `node`'s output alone, folded into its range (its output's range)."""
        r = readers.get(node.output[0], [])
        return r[0] if len(r) == 1 and r[0].op_type == "Relu" and node.output[0] != output_name else None

    def scale_of(name):
        return float(numpy_helper.to_array(next(i for i in inits if i.name == name)))

    def weights_and_bias(node, x_scale_name):
        """int8 weights symmetric per output row (axis 0), their scale and zero point, and the bias
        as int32 in units of x_scale * w_scale: the initializer names."""
        w = weights[node.input[1]]
        w_scale = (np.abs(w).reshape(w.shape[0], -1).max(axis=1) / 127).astype(np.float32)
        w_scale[w_scale == 0] = 1
        wq = np.clip(np.round(w / w_scale.reshape((-1,) + (1,) * (w.ndim - 1))), -127, 127).astype(np.int8)
        base = node.input[1]
        inits.extend([numpy_helper.from_array(wq, base + "_q"), numpy_helper.from_array(w_scale, base + "_scale"),
                      numpy_helper.from_array(np.zeros(w.shape[0], np.int8), base + "_zero_point")])
        names = [base + "_q", base + "_scale", base + "_zero_point"]
        if len(node.input) > 2:
            bq = np.round(weights[node.input[2]] / (scale_of(x_scale_name) * w_scale)).astype(np.int32)
            inits.append(numpy_helper.from_array(bq, node.input[2] + "_q"))
            names.append(node.input[2] + "_q")
        return names

    skipped = set()
    s, z = params(input_name, input_name + "_q")
    nodes.append(helper.make_node("QuantizeLinear", [input_name, s, z], [input_name + "_q"]))
    quantized[input_name] = (input_name + "_q", s, z)
    for node in graph.node:
        if node.name in skipped:
            continue
        t, a = node.op_type, _attrs(node)
        if t == "Identity" and node.input[0] in weights:
            continue
        relu = folded_relu(node) if t in ("Conv", "Add") else None
        out = relu.output[0] if relu else node.output[0]
        if relu:
            skipped.add(relu.name)
        q_out = out + "_q"
        if t == "Conv":
            xq, xs, xz = quantized[node.input[0]]
            w_names = weights_and_bias(node, xs)
            inputs = [xq, xs, xz, *w_names[:3], *params(out, q_out), *w_names[3:]]
            nodes.append(helper.make_node("QLinearConv", inputs, [q_out], name=node.name + "_quant", **a))
            quantized[out] = (q_out, inputs[6], inputs[7])
        elif t in ("MaxPool", "Flatten"):
            xq, xs, xz = quantized[node.input[0]]
            nodes.append(helper.make_node(t, [xq], [q_out], name=node.name + "_quant", **a))
            quantized[out] = (q_out, xs, xz)
        elif t == "Add":
            (aq, as_, az), (bq, bs, bz) = quantized[node.input[0]], quantized[node.input[1]]
            ys, yz = params(out, q_out)
            nodes.append(helper.make_node("QLinearAdd", [aq, as_, az, bq, bs, bz, ys, yz], [q_out], name=node.name + "_quant", domain="com.microsoft"))
            quantized[out] = (q_out, ys, yz)
        elif t == "GlobalAveragePool":
            xq, xs, xz = quantized[node.input[0]]
            ys, yz = params(out, q_out)
            nodes.append(helper.make_node("QLinearGlobalAveragePool", [xq, xs, xz, ys, yz], [q_out], name=node.name + "_quant", domain="com.microsoft",
                                          channels_last=0))
            quantized[out] = (q_out, ys, yz)
        elif t == "Gemm":
            if not a.get("transB", 0) or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0:
                raise ValueError("qoperator: only Gemm with transB and alpha, beta 1")
            xq, xs, xz = quantized[node.input[0]]
            w_names = weights_and_bias(node, xs)
            ys, yz = params(out, q_out)
            bias = w_names[3] if len(w_names) > 3 else ""
            nodes.append(helper.make_node("QGemm", [xq, xs, xz, *w_names[:3], bias, ys, yz], [q_out],
                                          name=node.name + "_quant", domain="com.microsoft", transB=1))
            quantized[out] = (q_out, ys, yz)
        else:
            raise ValueError(f"qoperator: {t} is not one of the ops this writes in QOperator form")
    q_final, fs, fz = quantized[output_name]
    nodes.append(helper.make_node("DequantizeLinear", [q_final, fs, fz], [output_name]))
    new_graph = helper.make_graph(nodes, graph.name + "_qoperator", [graph.input[0]], [graph.output[0]], inits)
    quantized_model = helper.make_model(new_graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)],
                                        producer_name="tilebank scripts/qoperator.py")
    quantized_model.ir_version = model.ir_version
    onnx.save(quantized_model, out_path)
