"""Single structural mutations of ONNX models, for tools/fuzz-mutations.py.

libFuzzer flips bytes of a protobuf, which rarely yields a well-formed
model with one field changed; these are such changes, made through the
onnx package on the seeds of the onnx-import fuzz target (the node tests'
models and the other small models of Debian's libonnx-testdata, and the
project's exported models of at most 256 KiB): in every graph, subgraphs
of If, Loop and Scan included,
- each node attribute set to other values (ints to 0, 1, 2, 3, -1, +-1,
  doubled and 2^40; floats to 0, -1, 1e30, NaN and infinity; each element
  of a list likewise, the list shortened, lengthened and emptied; strings
  to others the seeds use), given another kind, or removed;
- each node without its last input or output, with one more input, with
  an input left empty (optional) or named after another value or its own
  output, its output named after a graph input, as another op of the
  seeds or in another domain; the nodes of a graph in reverse order;
- each graph input and output removed, its element type changed, each
  dim set to 0, 1, +1, -1, 2^40 or a symbol, a dim removed or added, the
  shape dropped; each initializer's dims and element type likewise, its data
  one byte short;
- the model's opset set to others, or removed.
"""
import math
import os

import onnx
from onnx import AttributeProto, TensorProto

MAX_BYTES = 256 * 1024  # the fuzz target's kMaxInputBytes
TESTDATA = '/usr/share/libonnx-testdata/data'
MODEL_CACHE = os.path.expanduser('~/.cache/mlcc/models')

BIG = 1 << 40
INTS = lambda v: {w for w in (0, 1, 2, 3, -1, v + 1, v - 1, 2 * v, BIG)
                  if w != v and -2**63 <= w < 2**63}
FLOATS = (0.0, -1.0, 1e30, math.nan, math.inf)
ELEM_TYPES = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16,
              TensorProto.BFLOAT16, TensorProto.INT64, TensorProto.INT32,
              TensorProto.INT8, TensorProto.UINT8, TensorProto.BOOL,
              TensorProto.STRING, TensorProto.UNDEFINED)
OPSETS = (1, 6, 7, 9, 11, 13, 16, 18, 21, 99)
DOMAINS = ('com.microsoft', 'ai.onnx.ml', 'x')


def seed_paths():
    for top in (TESTDATA, MODEL_CACHE):
        for dirpath, _, files in sorted(os.walk(top)):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                if name.endswith('.onnx') and os.path.getsize(path) <= MAX_BYTES:
                    yield path


def graphs(graph, path=()):
    """(path, graph) for `graph` and every subgraph in its nodes'
    attributes; a path is a tuple of (node, attribute, graph or None)."""
    yield path, graph
    for n, node in enumerate(graph.node):
        for a, attr in enumerate(node.attribute):
            if attr.type == AttributeProto.GRAPH:
                yield from graphs(attr.g, path + ((n, a, None),))
            for i, g in enumerate(attr.graphs):
                yield from graphs(g, path + ((n, a, i),))


def graph_at(model, path):
    graph = model.graph
    for n, a, i in path:
        attr = graph.node[n].attribute[a]
        graph = attr.g if i is None else attr.graphs[i]
    return graph


class Mutator:
    """A model's mutations: each is (where, edit), `where` finding the
    message to change in a copy of the model and `edit` changing it."""

    def __init__(self, model, op_types, strings):
        self.model = model
        self.op_types = op_types
        self.strings = strings

    def all(self):
        model = self.model
        top = lambda m: m
        for v in OPSETS if model.opset_import else ():
            yield top, lambda m, v=v: setattr(m.opset_import[0], 'version', v)
        yield top, lambda m: m.ClearField('opset_import')
        for path, graph in graphs(model.graph):
            at = lambda field, i, p=path: lambda m: getattr(graph_at(m, p), field)[i]
            if len(graph.node) > 1:
                yield lambda m, p=path: graph_at(m, p), reverse_nodes
            names = [v.name for v in graph.input] + [t.name for t in graph.initializer]
            for n, node in enumerate(graph.node):
                for edit in self.node_edits(node, names):
                    yield at('node', n), edit
                for a, attr in enumerate(node.attribute):
                    for edit in attribute_edits(attr, self.strings):
                        yield (lambda m, p=path, n=n, a=a:
                               graph_at(m, p).node[n].attribute[a]), edit
            for field in ('input', 'output'):
                for i, value in enumerate(getattr(graph, field)):
                    for edit in value_info_edits(value):
                        yield at(field, i), edit
                    # One input or output fewer: a body of the wrong arity.
                    yield (lambda m, p=path: graph_at(m, p),
                           lambda g, f=field, i=i: getattr(g, f).pop(i))
            for i, tensor in enumerate(graph.initializer):
                for edit in tensor_edits(tensor):
                    yield at('initializer', i), edit

    def node_edits(self, node, names):
        edits = [lambda n: n.input.pop() if n.input else None,
                 lambda n: n.output.pop() if n.output else None,
                 lambda n: n.input.append(n.input[0] if n.input else 'x')]
        if node.input and node.output:
            # A cycle, and a second definition of a graph input.
            edits.append(lambda n: n.input.__setitem__(0, n.output[0]))
            edits += [lambda n, w=w: n.output.__setitem__(0, w) for w in names[:1]]
        for i in range(len(node.input)):
            edits.append(lambda n, i=i: n.input.__setitem__(i, ''))
            edits += [lambda n, i=i, w=w: n.input.__setitem__(i, w)
                      for w in names[:2] if w != node.input[i]]
        # A few other ops, chosen by the op's name, so that each op meets
        # other ops' attribute sets.
        start = hash_of(node.op_type) % max(1, len(self.op_types))
        edits += [lambda n, op=op: setattr(n, 'op_type', op)
                  for op in (self.op_types[start:] + self.op_types[:start])[:4]]
        edits += [lambda n, d=d: setattr(n, 'domain', d) for d in DOMAINS]
        edits += [lambda n, i=i: n.attribute.pop(i) for i in range(len(node.attribute))]
        return edits


def reverse_nodes(graph):
    """The nodes in the opposite order: values used before they are made."""
    nodes = [onnx.NodeProto.FromString(n.SerializeToString()) for n in graph.node]
    del graph.node[:]
    graph.node.extend(reversed(nodes))


def value_info_edits(value):
    edits = [lambda v, t=t: setattr(v.type.tensor_type, 'elem_type', t)
             for t in ELEM_TYPES]
    dims = lambda v: v.type.tensor_type.shape.dim
    edits.append(lambda v: v.type.tensor_type.ClearField('shape'))
    edits.append(lambda v: setattr(dims(v).add(), 'dim_value', 2))
    for i, dim in enumerate(value.type.tensor_type.shape.dim):
        edits.append(lambda v, i=i: dims(v).pop(i))
        edits.append(lambda v, i=i: setattr(dims(v)[i], 'dim_param', 'n'))
        edits += [lambda v, i=i, w=w: setattr(dims(v)[i], 'dim_value', w)
                  for w in {0, 1, -1, dim.dim_value + 1, BIG}]
    return edits


def tensor_edits(tensor):
    edits = [lambda t, e=e: setattr(t, 'data_type', e)
             for e in ELEM_TYPES if e != tensor.data_type]
    edits.append(lambda t: t.dims.append(2))
    for i, d in enumerate(tensor.dims):
        edits.append(lambda t, i=i: t.dims.pop(i))
        edits += [lambda t, i=i, w=w: t.dims.__setitem__(i, w)
                  for w in {0, -1, d + 1, BIG}]
    if tensor.raw_data:
        edits.append(lambda t: setattr(t, 'raw_data', t.raw_data[:-1]))
    return edits


def attribute_edits(attr, strings):
    kind, edits = attr.type, []
    if kind == AttributeProto.INT:
        edits += [lambda a, w=w: setattr(a, 'i', w) for w in INTS(attr.i)]
    elif kind == AttributeProto.FLOAT:
        edits += [lambda a, w=w: setattr(a, 'f', w) for w in FLOATS]
    elif kind == AttributeProto.STRING:
        edits += [lambda a, w=w: setattr(a, 's', w) for w in strings if w != attr.s]
    elif kind in (AttributeProto.INTS, AttributeProto.FLOATS):
        field = 'ints' if kind == AttributeProto.INTS else 'floats'
        values = list(getattr(attr, field))
        others = (lambda v: INTS(v) - {2, 3, 2 * v}) if field == 'ints' else \
            (lambda v: FLOATS)
        for i, v in enumerate(values):
            edits += [lambda a, i=i, w=w: getattr(a, field).__setitem__(i, w)
                      for w in others(v)]
        edits += [lambda a: getattr(a, field).pop() if getattr(a, field) else None,
                  lambda a: getattr(a, field).append(values[-1] if values else 1),
                  lambda a: a.ClearField(field)]
    elif kind == AttributeProto.TENSOR:
        edits += [lambda a, e=e: setattr(a.t, 'data_type', e) for e in ELEM_TYPES]
        edits += [lambda a: a.t.dims.append(2), lambda a: a.t.ClearField('dims')]
    # The same value under another kind: legacy exporters write those.
    other = AttributeProto.FLOAT if kind == AttributeProto.INT else AttributeProto.INT
    edits.append(lambda a: setattr(a, 'type', other))
    return edits


def hash_of(text):
    return sum(text.encode()) * 2654435761 % (1 << 32)


def mutations():
    """Every mutation of every seed, as bytes."""
    models = []
    for path in seed_paths():
        try:
            models.append(onnx.load_model_from_string(open(path, 'rb').read()))
        except Exception:  # not a model the onnx package reads: skip it
            continue
    nodes = [n for m in models for _, g in graphs(m.graph) for n in g.node]
    op_types = sorted({n.op_type for n in nodes})
    strings = sorted({a.s for n in nodes for a in n.attribute
                      if a.type == AttributeProto.STRING})
    strings = [b''] + strings[::max(1, len(strings) // 12)]
    for model in models:
        original = model.SerializeToString()
        for where, edit in Mutator(model, op_types, strings).all():
            copy = onnx.ModelProto()
            copy.ParseFromString(original)
            edit(where(copy))
            data = copy.SerializeToString()
            if data != original and len(data) <= MAX_BYTES:
                yield data
