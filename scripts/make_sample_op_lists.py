#!/usr/bin/env python3
"""Writes data/sample_lab1_ops.json and data/sample_lab2_ops.json, the operator lists that
scripts/make_sample_banks.sh tunes into the sample banks: picked by name from the model lists in
data/ (scripts/make_op_lists.py writes those)."""
import json
import os

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")

LAB1 = {
    "ops_bert_base.json": ["attention_qkv", "attention_output", "ffn_intermediate", "ffn_output", "attention_scores",
                           "attention_context", "attention_softmax", "attention_layernorm", "ffn_gelu", "ffn_bias_add"],
    "ops_resnet50.json": ["conv1", "res2a_branch2a", "res2a_branch2b", "res3a_branch2b", "res4a_branch2b", "res5a_branch2b",
                          "pool1", "pool5", "fc1000"],
    "ops_mobilenet_v2_dw.json": ["dw_0_32x112s1", "dw_2_144x56s1", "dw_4_192x28s1", "dw_6_384x14s1", "dw_9_960x7s1"],
}
LAB2 = {
    "ops_bert_base.json": ["attention_qkv", "ffn_intermediate", "attention_scores", "attention_softmax", "attention_layernorm",
                           "ffn_bias_add"],
    "ops_resnet50.json": ["res2a_branch2a", "res2a_branch2b", "pool5", "fc1000", "res3a_branch2a", "res4a_branch2a"],
    "ops_mobilenet_v2_dw.json": ["dw_2_144x56s1", "dw_6_384x14s1", "dw_1_96x112s2"],
}


def pick(selection):
    ops = []
    for file, names in selection.items():
        by_name = {op["name"]: op for op in json.load(open(os.path.join(DATA, file)))}
        ops += [by_name[n] for n in names]
    return ops


for lab, selection in (("lab1", LAB1), ("lab2", LAB2)):
    with open(os.path.join(DATA, f"sample_{lab}_ops.json"), "w") as f:
        json.dump(pick(selection), f, indent=1)
        f.write("\n")
