"""QDQ models as ONNX Runtime's quantizer and torch.onnx's fake-quantize export write them: u8
activations with one scale and zero point, int8 weights per output channel (symmetric), float
biases; QuantizeLinear/DequantizeLinear around each Conv, MatMul and Gemm."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class QdqBuilder:
    def __init__(self, seed=0):
        self.nodes, self.inits, self.rng, self.n = [], [], np.random.default_rng(seed), 0

    def name(self, base):
        self.n += 1
        return "%s_%d" % (base, self.n)

    def const(self, array, base):
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def qdq(self, x, scale, zero=128):
        """x (float) -> QuantizeLinear (u8) -> DequantizeLinear."""
        s, z = self.const(np.float32(scale), "s"), self.const(np.uint8(zero), "z")
        q, dq = self.name("q"), self.name("dq")
        self.nodes += [helper.make_node("QuantizeLinear", [x, s, z], [q], name=q), helper.make_node("DequantizeLinear", [q, s, z], [dq], name=dq)]
        return dq

    def weights(self, w, axis):
        """Float weights -> int8 per channel along `axis` -> DequantizeLinear."""
        reduce = tuple(d for d in range(w.ndim) if d != axis)
        scale = (np.abs(w).max(axis=reduce) / 127).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        wq = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
        q, s, z = self.const(wq, "wq"), self.const(scale, "ws"), self.const(np.zeros_like(scale, dtype=np.int8), "wz")
        dq = self.name("wdq")
        self.nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [dq], name=dq, axis=axis))
        return dq

    def conv(self, x, cin, cout, k=3, relu=True, group=1, stride=1, clip=False):
        w = self.weights(self.rng.standard_normal((cout, cin // group, k, k)).astype(np.float32) * 0.2, 0)
        b = self.const(self.rng.standard_normal(cout).astype(np.float32) * 0.1, "b")
        y = self.name("conv")
        self.nodes.append(helper.make_node("Conv", [x, w, b], [y], name=y, pads=[k // 2] * 4, group=group, strides=[stride, stride]))
        if clip:  # ReLU6, as torchvision's MobileNetV2 exports it
            r = self.name("clip")
            self.nodes.append(helper.make_node("Clip", [y, self.const(np.float32(0), "lo"), self.const(np.float32(6), "hi")], [r], name=r))
            y = r
        elif relu:
            r = self.name("relu")
            self.nodes.append(helper.make_node("Relu", [y], [r], name=r))
            y = r
        return y

    def model(self, x_shape, out, out_shape, opset=13):
        graph = helper.make_graph(self.nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                                  [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        onnx.checker.check_model(m)
        return m


def qdq_cnn(path):
    """Conv+Relu, a depthwise Conv+Clip (ReLU6), a residual Add, MaxPool, GlobalAveragePool and a Gemm, all QDQ."""
    b = QdqBuilder()
    x = b.qdq("x", 0.02)
    c1 = b.qdq(b.conv(x, 3, 16), 0.05, 0)
    c2 = b.qdq(b.conv(c1, 16, 16, group=16, clip=True), 0.03, 0)
    c3 = b.qdq(b.conv(c2, 16, 16, k=1, relu=False), 0.05, 128)
    s = b.name("add")
    b.nodes.append(helper.make_node("Add", [c1, c3], [s], name=s))
    mp = b.name("maxpool")  # between Q/DQ pairs of one scale: it runs on the 8-bit tensor
    b.nodes.append(helper.make_node("MaxPool", [b.qdq(s, 0.05, 128)], [mp], name=mp, kernel_shape=[2, 2], strides=[2, 2]))
    pooled = b.name("gap")
    b.nodes.append(helper.make_node("GlobalAveragePool", [b.qdq(mp, 0.05, 128)], [pooled], name=pooled))
    flat = b.name("flat")
    b.nodes.append(helper.make_node("Flatten", [pooled], [flat], name=flat))
    flat = b.qdq(flat, 0.02, 128)
    w = b.weights(b.rng.standard_normal((10, 16)).astype(np.float32) * 0.3, 0)
    bias = b.const(b.rng.standard_normal(10).astype(np.float32) * 0.1, "fc_b")
    y = b.name("fc")
    b.nodes.append(helper.make_node("Gemm", [flat, w, bias], [y], name=y, transB=1))
    b.nodes.append(helper.make_node("Identity", [b.qdq(y, 0.05, 128)], ["y"], name="out"))
    onnx.save(b.model([1, 3, 32, 32], "y", [1, 10]), str(path))
    return str(path)


def qdq_mlp(path, seq=8, d=64, hidden=128):
    """A transformer block's MLP in QDQ: MatMul + bias Add + Relu, MatMul + bias Add."""
    b = QdqBuilder(1)
    x = b.qdq("x", 0.03)
    w1 = b.weights(b.rng.standard_normal((d, hidden)).astype(np.float32) * 0.2, 1)
    h, hb, hr = b.name("mm"), b.name("add"), b.name("relu")
    b.nodes += [helper.make_node("MatMul", [x, w1], [h], name=h),
                helper.make_node("Add", [h, b.const(b.rng.standard_normal(hidden).astype(np.float32) * 0.1, "b1")], [hb], name=hb),
                helper.make_node("Relu", [hb], [hr], name=hr)]
    w2 = b.weights(b.rng.standard_normal((hidden, d)).astype(np.float32) * 0.1, 1)
    o, ob = b.name("mm"), b.name("add")
    b.nodes += [helper.make_node("MatMul", [b.qdq(hr, 0.05, 0), w2], [o], name=o),
                helper.make_node("Add", [o, b.const(b.rng.standard_normal(d).astype(np.float32) * 0.1, "b2")], [ob], name=ob)]
    b.nodes.append(helper.make_node("Identity", [b.qdq(ob, 0.04, 128)], ["y"], name="out"))
    onnx.save(b.model([1, seq, d], "y", [1, seq, d]), str(path))
    return str(path)
