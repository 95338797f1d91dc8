"""Writes into DIR/models (argv[1] = DIR) models whose weight w [4] f32,
added to the input x [4], is external data: good.onnx reads w.bin beside
it; the others point outside the folder (a parent path, an absolute path,
a symlink to DIR/outside.bin), give an offset that is not a number, a
range past the file's end, a directory, or dims that claim 4 GiB of a
16-byte file."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

root = sys.argv[1]
models = os.path.join(root, "models")
os.makedirs(os.path.join(models, "subdir"), exist_ok=True)
data = np.array([1, 2, 3, 4], np.float32).tobytes()
for path in (os.path.join(models, "w.bin"), os.path.join(root, "outside.bin")):
    with open(path, "wb") as f:
        f.write(data)
link = os.path.join(models, "link.bin")
if os.path.lexists(link):
    os.remove(link)
os.symlink(os.path.join(root, "outside.bin"), link)

def model(name, entries, dims=(4,)):
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.extend(dims)
    w.data_location = TensorProto.EXTERNAL
    for key, value in entries:
        e = w.external_data.add()
        e.key, e.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with open(os.path.join(models, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())

model("good", [("location", "w.bin")])
model("parent", [("location", "../outside.bin")])
model("absolute", [("location", os.path.join(root, "outside.bin"))])
model("link", [("location", "link.bin")])
model("badoffset", [("location", "w.bin"), ("offset", "12abc")])
model("range", [("location", "w.bin"), ("offset", "8"), ("length", "16")])
model("directory", [("location", "subdir")])
model("huge", [("location", "w.bin")], dims=(1 << 30,))
