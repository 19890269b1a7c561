#!/usr/bin/env python3
"""The PyTorch reference (torch_nmt.py) translating with PyTorch's dynamic int8 quantization:
what a PyTorch user gets from one call, torch.ao.quantization.quantize_dynamic, applied to the
loaded model. Its nn.Linear, nn.GRU and nn.GRUCell modules get int8 weights (per tensor) and
activations quantized per batch on the fly; the rest stays fp32: the embeddings, the
Transformer's attention projections (nn.MultiheadAttention keeps in_proj as a plain parameter and
out_proj as a linear that PyTorch does not quantize) and its output projection (the tied
embedding matrix). PyTorch's fused fast path for Transformer encoder layers does not accept
quantized linears (torch 1.13 fails in it), so those layers are switched to the module-by-module
path, as a PyTorch user has to. The modules it quantized are counted on stderr.

    bench-peer-int8.py TORCH_NMT_PY translate --model CKPT [translate options]
"""

import os
import sys

import torch


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: bench-peer-int8.py TORCH_NMT_PY translate [options]")
    peer = os.path.abspath(sys.argv[1])
    sys.path.insert(0, os.path.dirname(peer))
    import torch_nmt as reference

    load_fp32 = reference.load_model

    def load_int8(path):
        ckpt, model, vocab = load_fp32(path)
        kinds = {torch.nn.Linear, torch.nn.GRU, torch.nn.GRUCell}
        quantized = torch.ao.quantization.quantize_dynamic(model, kinds, dtype=torch.qint8).eval()
        for layer in quantized.modules():
            if isinstance(layer, torch.nn.TransformerEncoderLayer):
                layer.activation_relu_or_gelu = False  # one of the fast path's conditions
        count = sum(1 for m in quantized.modules() if type(m).__module__.startswith("torch.ao.nn.quantized"))
        print(f'{{"type": "int8", "quantized_modules": {count}}}', file=sys.stderr, flush=True)
        return ckpt, quantized, vocab

    reference.load_model = load_int8  # translate() looks the loader up at call time
    reference.main(sys.argv[2:])


if __name__ == "__main__":
    main()
