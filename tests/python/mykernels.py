"""Functions the `new` tests scaffold from: a local fused op and a weight-quantized int8 matmul."""
import torch


def fused(x, w):
    """A local two-input function: relu(x) * w (w broadcast over rows)."""
    return torch.relu(x) * w


def quantize(raw):
    """derive: raw random tensors {x, w} -> the call's inputs {x, w_q (int8), scales} in call order."""
    x, w = raw["x"], raw["w"].float()
    scales = w.abs().amax(dim=1) / 127.0
    w_q = torch.clamp(torch.round(w / scales[:, None]), -127, 127).to(torch.int8)
    return {"x": x, "w_q": w_q, "scales": scales.to(x.dtype)}


def quantize_misnamed(raw):
    """derive that returns names other than the target's inputs (wq instead of w_q)."""
    d = quantize(raw)
    return {"x": d["x"], "wq": d["w_q"], "scales": d["scales"]}


def int8_matmul(x, w_q, scales):
    """The baseline: dequantize on the fly in x's dtype, per-output-channel scales."""
    return (x @ w_q.to(x.dtype).t()) * scales


def int8_matmul_ref(x, w_q, scales):
    """The reference: the same math in fp32, given the derived inputs as they are."""
    return (x.float() @ w_q.float().t()) * scales.float()
