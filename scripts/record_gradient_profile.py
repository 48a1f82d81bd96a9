#!/usr/bin/python3
"""Writes a GDAT gradient profile of a torchvision model's training step, measured on this machine:
ready times of its gradients (batch --batch, --iterations timed backward passes) and a gloo
AllReduce sweep between --world-size local ranks. `tilebank tune -j 4 --gradients OUT` plans from it.

    /usr/bin/python3 scripts/record_gradient_profile.py --model resnet18 --batch 2 -o profile.json
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402
import torchvision  # noqa: E402

from tilebank import gradient_profile  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="resnet18", help="a torchvision classification model")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--size", type=int, default=224, help="input height and width")
    ap.add_argument("--iterations", type=int, default=4)
    ap.add_argument("--world-size", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if not hasattr(torchvision.models, args.model):
        sys.exit(f"record_gradient_profile.py: torchvision has no model '{args.model}'")
    model = getattr(torchvision.models, args.model)(num_classes=1000)
    x = torch.randn(args.batch, 3, args.size, args.size)
    y = torch.randint(0, 1000, (args.batch,))
    loss_fn = torch.nn.CrossEntropyLoss()
    result = gradient_profile.profile(model, lambda: loss_fn(model(x), y), args.model, world_size=args.world_size,
                                      ranks_per_node=args.world_size, iterations=args.iterations)
    with open(args.output, "w") as f:
        json.dump(result, f, indent=1)
    print(f"{args.output}: {len(result['gradients'])} gradients, backward {result['backward_ms']:.1f} ms, "
          f"AllReduce {result['allreduce'][0]['ms']:.3f} ms at 4 B to {result['allreduce'][-1]['ms']:.1f} ms at "
          f"{result['allreduce'][-1]['bytes'] >> 20} MiB")


if __name__ == "__main__":
    main()
