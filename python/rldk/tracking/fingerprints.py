"""Content fingerprints of datasets, models and tokenizers. Every byte and every value is hashed, never a sample; the
hashing itself is native (rldk.provenance, XXH3-128), this module only decides which bytes, in which order.

Each fingerprint mixes in a short type tag, names, dtypes, shapes and lengths before the data, so bytes that could be
read two ways (a column boundary, a string boundary, a reshaped array) hash differently.
"""
import os

from .json_safe import canonical_json, json_safe

DATASET_KINDS = ("files", "hf_dataset", "arrow", "numpy", "pandas", "python")


def _provenance():
    from .. import provenance  # native; imported late so `import rldk.tracking` stays cheap
    return provenance


class _Hasher:
    """A provenance.Hasher with framing helpers: every variable-length piece is preceded by its length."""

    def __init__(self):
        self.h = _provenance().Hasher()

    def text(self, s):
        data = s.encode("utf-8")
        self.h.update(b"%d:" % len(data))
        self.h.update(data)

    def json(self, value):
        self.text(canonical_json(json_safe(value)))

    def raw(self, buf, nbytes):
        self.h.update(b"%d:" % nbytes)
        if nbytes:
            self.h.update(buf)

    def digest(self):
        return self.h.digest()


# ---------------------------------------------------------------------------------------------------- datasets
def fingerprint_dataset(obj, threads=0):
    """{"kind", "hash", "bytes", "rows", ["files"], ["columns"]} of a dataset object or path(s).

    Paths (str/PathLike, or a list of them) are hashed file by file; a folder is walked. HF datasets backed by Arrow
    cache files (load_dataset/load_from_disk, untouched since) are hashed by those files; other HF datasets, pyarrow
    Tables/RecordBatches, pandas DataFrames and NumPy arrays by their values; lists/dicts/tuples of Python objects by
    their canonical JSON (sorted keys).
    """
    if isinstance(obj, (str, os.PathLike)):
        return _fingerprint_paths([obj], threads)
    if isinstance(obj, (list, tuple)) and obj and all(isinstance(p, (str, os.PathLike)) for p in obj) \
            and all(os.path.exists(os.fspath(p)) for p in obj):
        return _fingerprint_paths(list(obj), threads)
    module = type(obj).__module__ or ""
    if module.startswith("datasets"):
        name = type(obj).__name__
        if name == "Dataset":
            return _fingerprint_hf_dataset(obj, threads)
        if name in ("IterableDataset", "IterableDatasetDict"):
            raise TypeError("track_dataset: a streaming (iterable) dataset cannot be hashed without reading it all; "
                            "track the files it streams from (a path or list of paths) instead")
    if module.startswith("pyarrow"):
        return _fingerprint_arrow(obj)
    if module.startswith("pandas") and type(obj).__name__ in ("DataFrame", "Series"):
        return _fingerprint_pandas(obj)
    if module == "numpy" or module.startswith("numpy."):
        return _fingerprint_numpy(obj)
    if module.startswith("torch") and hasattr(obj, "detach"):
        tensor_hash, nbytes = _tensor_hash(obj)
        return {"kind": "numpy", "hash": tensor_hash, "bytes": nbytes,
                "rows": int(obj.shape[0]) if obj.dim() else None}
    if isinstance(obj, (list, dict, tuple)):
        return _fingerprint_python(obj)
    raise TypeError("track_dataset: cannot hash a %s.%s; pass a path, a list of paths, an HF datasets.Dataset, a "
                    "pyarrow Table, a pandas DataFrame, a NumPy array, or a list/dict of plain Python values"
                    % (module, type(obj).__name__))


def _fingerprint_paths(paths, threads):
    prov = _provenance()
    paths = [os.path.abspath(os.fspath(p)) for p in paths]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise FileNotFoundError("track_dataset: no such file or folder: %s" % missing[0])
    if len(paths) == 1 and os.path.isfile(paths[0]):
        # File paths are stored relative to "root" (here the file's folder), so the same data read from another
        # checkout or machine differs in "root" alone.
        (entry,) = prov.hash_files(paths, threads)
        return {"kind": "files", "hash": entry["hash"], "bytes": int(entry["bytes"]), "rows": None,
                "files": [{"path": os.path.basename(paths[0]), "bytes": int(entry["bytes"]), "hash": entry["hash"]}],
                "root": os.path.dirname(paths[0])}
    # Folders and several paths: a Merkle root over (relative path, size, hash) of every file, so a renamed or moved
    # file changes the hash as a changed byte does. Paths are relative to the common parent.
    root = os.path.commonpath(paths)
    if os.path.isfile(root):
        root = os.path.dirname(root)
    tree = prov.hash_tree(paths, root, threads)
    files = [{"path": f["path"], "bytes": int(f["bytes"]), "hash": f["hash"]} for f in tree["files"]]
    return {"kind": "files", "hash": tree["root"], "bytes": int(tree["bytes"]), "rows": None, "files": files,
            "root": root}


def _hf_cache_paths(ds):
    """The Arrow files holding exactly this dataset's rows and columns, or None when the dataset is not simply those
    files (an indices mapping from select/shuffle/split, in-memory blocks, columns dropped or cast since loading)."""
    if getattr(ds, "_indices", None) is not None or not ds.cache_files:
        return None
    try:
        from datasets.table import ConcatenationTable, MemoryMappedTable
    except ImportError:
        return None
    table = ds.data
    blocks = [t for row in table.blocks for t in row] if isinstance(table, ConcatenationTable) else [table]
    paths = []
    for block in blocks:
        if not isinstance(block, MemoryMappedTable):
            return None
        if any(op[0] != "replace_schema_metadata" for op in (block.replays or [])):
            return None
        paths.append(block.path)
    return paths


def _fingerprint_hf_dataset(ds, threads):
    features = ds.features.to_dict() if ds.features is not None else None
    paths = _hf_cache_paths(ds)
    if paths is not None:
        paths = [os.path.abspath(p) for p in paths]
        entries = _provenance().hash_files(paths, threads)
        root = os.path.commonpath([os.path.dirname(p) for p in paths])
        h = _Hasher()
        h.text("hf_dataset/files")
        h.json(features)
        for e in entries:
            h.text(e["hash"])
        return {"kind": "hf_dataset", "hash": h.digest(), "bytes": sum(int(e["bytes"]) for e in entries),
                "rows": ds.num_rows, "root": root,
                "files": [{"path": os.path.relpath(p, root).replace(os.sep, "/"), "bytes": int(e["bytes"]),
                           "hash": e["hash"]} for p, e in zip(paths, entries)]}
    # In memory (or a view of cache files): the Arrow table's buffers column by column, and the indices mapping
    # that select/shuffle/train_test_split put over it.
    table = ds.data.table if hasattr(ds.data, "table") else ds.data
    out = _fingerprint_arrow(table, tag="hf_dataset/table", extra=features,
                             indices=ds._indices.table if getattr(ds, "_indices", None) is not None else None)
    out["kind"] = "hf_dataset"
    out["rows"] = ds.num_rows
    return out


def _bits(buf, offset, length):
    """Bits [offset, offset + length) of an Arrow bitmap, one byte (0/1) each."""
    import numpy as np

    return np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little")[offset:offset + length]


def _hash_arrow_array(h, array):
    """One Arrow array chunk by its values, not its storage: type, length, null count, the validity of each slot,
    then the values. Booleans, fixed-width numbers/dates/times and (large_)string/binary are read within the chunk's
    slice (a slice of a bigger array hashes like the same values built alone; the bytes under a null slot do not
    count). Other types (nested, dictionary, decimal) hash every buffer after compacting a sliced chunk."""
    import numpy as np
    import pyarrow as pa

    t = array.type
    n, offset = len(array), array.offset
    h.text(str(t))
    h.text("%d/%d" % (n, array.null_count))
    buffers = array.buffers()
    valid = None
    if array.null_count and buffers[0] is not None:
        valid = _bits(buffers[0], offset, n)
        h.raw(valid, valid.nbytes)
    else:
        h.text("all valid")
    if pa.types.is_null(t):
        return 0
    if pa.types.is_boolean(t):
        values = _bits(buffers[1], offset, n)
        if valid is not None:
            values = values & valid
        h.raw(values, values.nbytes)
        return int(values.nbytes)
    if (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t)) and t.bit_width % 8 == 0 \
            and len(buffers) == 2:
        width = t.bit_width // 8
        data = np.frombuffer(buffers[1], dtype=np.uint8)[offset * width:(offset + n) * width]
        if valid is not None:
            data = data.reshape(n, width).copy()
            data[valid == 0] = 0
            data = data.reshape(-1)
        h.raw(data, data.nbytes)
        return int(data.nbytes)
    large = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    if large or pa.types.is_string(t) or pa.types.is_binary(t):
        offsets = np.frombuffer(buffers[1], dtype=np.int64 if large else np.int32)[offset:offset + n + 1]
        first, last = (int(offsets[0]), int(offsets[-1])) if n else (0, 0)
        lengths = np.diff(offsets).astype(np.int64)  # each value's length: boundaries are part of the content
        h.raw(lengths, lengths.nbytes)
        data = np.frombuffer(buffers[2], dtype=np.uint8)[first:last] if buffers[2] is not None and last > first \
            else np.zeros(0, dtype=np.uint8)
        h.raw(data, data.nbytes)
        return int(lengths.nbytes + data.nbytes)
    if offset != 0 or array.get_total_buffer_size() != array.nbytes:
        array = pa.concat_arrays([array])  # a copy holding only this slice
    nbytes = 0
    for buf in array.buffers():
        if buf is None:
            h.text("-")
            continue
        h.raw(buf, buf.size)
        nbytes += buf.size
    return nbytes


def _fingerprint_arrow(table, tag="arrow", extra=None, indices=None):
    import pyarrow as pa

    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if isinstance(table, (pa.Array, pa.ChunkedArray)):
        table = pa.table({"values": table})
    if not isinstance(table, pa.Table):
        raise TypeError("track_dataset: cannot hash pyarrow %s" % type(table).__name__)
    top = _Hasher()
    top.text(tag)
    top.json(extra)
    top.text("%d" % table.num_rows)
    columns = []
    total = 0
    for name, column in zip(table.column_names, table.columns):
        h = _Hasher()
        h.text(str(column.type))
        nbytes = 0
        for chunk in column.chunks:
            nbytes += _hash_arrow_array(h, chunk)
        digest = h.digest()
        total += nbytes
        columns.append({"name": name, "dtype": str(column.type), "hash": digest})
        top.text(name)
        top.text(digest)
    if indices is not None:
        fp = _fingerprint_arrow(indices, tag="indices")
        top.text("indices")
        top.text(fp["hash"])
        total += fp["bytes"]
    return {"kind": "arrow", "hash": top.digest(), "bytes": total, "rows": table.num_rows, "columns": columns}


def _numpy_bytes(h, array):
    """dtype, shape, then the C-order bytes of a NumPy array (object arrays: canonical JSON of their values)."""
    import numpy as np

    h.text(array.dtype.str if array.dtype.fields is None else repr(array.dtype.descr))
    h.text(repr(tuple(int(n) for n in array.shape)))
    if array.dtype.hasobject:
        h.json(array.tolist())
        return 0
    contiguous = np.ascontiguousarray(array)
    h.raw(contiguous.reshape(-1).view(np.uint8), contiguous.nbytes)
    return int(contiguous.nbytes)


def _fingerprint_numpy(obj):
    import numpy as np

    array = np.asarray(obj)
    h = _Hasher()
    h.text("numpy")
    nbytes = _numpy_bytes(h, array)
    return {"kind": "numpy", "hash": h.digest(), "bytes": nbytes, "rows": int(array.shape[0]) if array.ndim else None}


def _hash_pandas_values(h, values):
    """One pandas column (a Series; the index as a Series too): dtype text, then its values. Numeric, bool and
    datetime columns through their NumPy buffer (plus the missing-value mask for nullable dtypes); strings and
    objects as Arrow large_string (offsets give each value's length, so boundaries are unambiguous; nulls in the
    validity bitmap), falling back to canonical JSON per value for mixed objects. Categoricals: categories, then
    codes."""
    import numpy as np
    import pandas as pd

    dtype = values.dtype
    h.text(str(dtype))
    if isinstance(dtype, pd.CategoricalDtype):
        _hash_pandas_values(h, pd.Series(values.cat.categories))
        return _numpy_bytes(h, values.cat.codes.to_numpy())
    if isinstance(dtype, np.dtype) and dtype.kind in "biufcmM":
        return _numpy_bytes(h, values.to_numpy())
    if isinstance(dtype, pd.DatetimeTZDtype):
        return _numpy_bytes(h, values.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy())  # zone is in the dtype
    mask = np.asarray(pd.isna(values))
    numpy_type = getattr(dtype, "numpy_dtype", None)
    if numpy_type is not None and numpy_type.kind in "biufc":
        # Nullable Int64/Float64/boolean (and pyarrow-backed numbers): the mask, then values with missing as 0.
        nbytes = _numpy_bytes(h, mask)
        return nbytes + _numpy_bytes(h, values.to_numpy(dtype=numpy_type, na_value=0))
    try:
        import pyarrow as pa
        array = pa.array(values, type=pa.large_string(), from_pandas=True)
    except Exception:  # noqa: BLE001 - no pyarrow, or not all strings (ints, lists, dicts in an object column)
        array = None
    if array is not None:
        h.text("strings")
        return _hash_arrow_array(h, array)
    h.text("objects")
    nbytes = 0
    for value, missing in zip(values.tolist() if hasattr(values, "tolist") else list(values), mask.tolist()):
        if missing is True:
            h.text("\x00null")
        else:
            text = canonical_json(json_safe(value))
            h.text(text)
            nbytes += len(text)
    return nbytes


def _fingerprint_pandas(obj):
    import pandas as pd

    frame = obj.to_frame() if isinstance(obj, pd.Series) else obj
    top = _Hasher()
    top.text("pandas")
    top.text("%d" % len(frame))
    columns = []
    total = 0
    for position, name in enumerate(frame.columns):
        h = _Hasher()
        total += _hash_pandas_values(h, frame.iloc[:, position])
        digest = h.digest()
        label = str(name)
        columns.append({"name": label, "dtype": str(frame.dtypes.iloc[position]), "hash": digest})
        top.json(json_safe(name))
        top.text(digest)
    index = _Hasher()
    total += _hash_pandas_values(index, pd.Series(frame.index))
    top.text("index")
    top.json(json_safe(list(frame.index.names)))
    top.text(index.digest())
    return {"kind": "pandas", "hash": top.digest(), "bytes": total, "rows": len(frame), "columns": columns}


def _fingerprint_python(obj):
    h = _Hasher()
    h.text("python")
    text = canonical_json(json_safe(obj))
    h.text(text)
    return {"kind": "python", "hash": h.digest(), "bytes": len(text.encode("utf-8")),
            "rows": len(obj) if isinstance(obj, (list, tuple)) else None}


# ---------------------------------------------------------------------------------------------------- models
def _tensor_bytes(tensor):
    """The bytes of a tensor, C order, on the CPU, as a uint8 NumPy view (any dtype: bf16, fp8, bool, complex)."""
    import torch

    t = tensor.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous().reshape(-1)
    if t.dtype is not torch.uint8:
        t = t.view(torch.uint8)
    return t.numpy()


def _tensor_hash(tensor):
    data = _tensor_bytes(tensor)
    h = _Hasher()
    h.text(str(tensor.dtype))
    h.text(repr(list(tensor.shape)))
    h.raw(data, data.nbytes)
    return h.digest(), int(data.nbytes)


def _class_name(obj):
    cls = type(obj)
    return "%s.%s" % (cls.__module__, cls.__qualname__)


def fingerprint_model(model):
    """{"class", "architecture_hash", "weights_hash", "parameters", "trainable_parameters", "tensors", "bytes"}.

    Architecture: every module's qualified name and class, every parameter's and buffer's name, shape and dtype.
    Weights: every parameter and buffer, streamed tensor by tensor (each copied to the CPU on its own), one hash per
    tensor; weights_hash covers the list of (name, dtype, shape, tensor hash). Tied weights are counted once, as
    named_parameters() lists them."""
    import torch

    if not isinstance(model, torch.nn.Module):
        raise TypeError("track_model: expected a torch.nn.Module, got %s" % _class_name(model))
    tensors = [("param", n, p) for n, p in model.named_parameters()] + \
              [("buffer", n, b) for n, b in model.named_buffers()]
    architecture = {
        "modules": [[name, _class_name(m)] for name, m in model.named_modules()],
        "tensors": [[role, name, list(t.shape), str(t.dtype)] for role, name, t in tensors],
    }
    arch = _Hasher()
    arch.text("torch-module")
    arch.json(architecture)
    entries = []
    weights = _Hasher()
    weights.text("torch-weights")
    total = 0
    for role, name, t in tensors:
        if t.is_meta:
            digest, nbytes = None, 0  # no data to hash (a model built on the meta device, not loaded yet)
        else:
            digest, nbytes = _tensor_hash(t)
        total += nbytes
        entries.append({"name": name, "shape": [int(n) for n in t.shape], "dtype": str(t.dtype).replace("torch.", ""),
                        "hash": digest, "role": role})
        weights.json([role, name, str(t.dtype), list(t.shape), digest])
    params = list(model.parameters())
    return {
        "class": _class_name(model),
        "architecture_hash": arch.digest(),
        "weights_hash": weights.digest(),
        "parameters": int(sum(p.numel() for p in params)),
        "trainable_parameters": int(sum(p.numel() for p in params if p.requires_grad)),
        "tensors": entries,
        "bytes": total,
    }


# ---------------------------------------------------------------------------------------------------- tokenizers
def fingerprint_tokenizer(tokenizer):
    """{"class", "hash", "vocab_size"}: a fast tokenizer's full serialization (normalizer, pre-tokenizer, vocabulary,
    merges, added tokens); a slow one's vocabulary (and SentencePiece model when it has one); plus, for both, the
    special tokens, padding/truncation sides, maximum length and chat template."""
    h = _Hasher()
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and hasattr(backend, "to_str"):
        h.text("fast")
        h.text(backend.to_str())
    elif hasattr(tokenizer, "get_vocab"):
        h.text("vocab")
        h.json(tokenizer.get_vocab())
        sp_model = getattr(tokenizer, "sp_model", None)
        if sp_model is not None and hasattr(sp_model, "serialized_model_proto"):
            proto = sp_model.serialized_model_proto()
            h.raw(proto, len(proto))
    elif hasattr(tokenizer, "to_str"):  # a bare tokenizers.Tokenizer
        h.text("fast")
        h.text(tokenizer.to_str())
    else:
        raise TypeError("track_tokenizer: expected a Hugging Face tokenizer, got %s" % _class_name(tokenizer))
    settings = {}
    for attr in ("special_tokens_map", "padding_side", "truncation_side", "model_max_length", "chat_template"):
        value = getattr(tokenizer, attr, None)
        if value is not None:
            settings[attr] = value
    h.json(settings)
    try:
        vocab_size = len(tokenizer)  # with added tokens: the number of ids the model's embedding must cover
    except TypeError:
        vocab_size = getattr(tokenizer, "vocab_size", None)
        if vocab_size is None and hasattr(tokenizer, "get_vocab_size"):
            vocab_size = tokenizer.get_vocab_size()
    return {"class": _class_name(tokenizer), "hash": h.digest(), "vocab_size": int(vocab_size)
            if vocab_size is not None else None}
