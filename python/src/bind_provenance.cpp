// rldk._core provenance functions: XXH3-128 content hashes of buffers and files, lineage manifests, run manifest
// diffs. Python wraps them in rldk.provenance and rldk.lineage; rldk.tracking hashes datasets and weights with them.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "binding_support.h"
#include "rldk/provenance.h"

namespace nb = nanobind;
using namespace nb::literals;
namespace pv = rldk::provenance;

namespace {

// Buffers above this are hashed with the GIL released (other Python threads run meanwhile); below it the release
// costs more than the hash.
constexpr size_t RELEASE_GIL_BYTES = size_t{1} << 20;

// Feeds any C-contiguous buffer-protocol object (bytes, bytearray, memoryview, NumPy array) to `hasher`, without a
// copy. A non-contiguous view is refused by the buffer protocol itself (BufferError), never silently copied.
void update_from_buffer(pv::ContentHasher& hasher, nb::handle obj) {
  Py_buffer view;
  if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
  struct Release {
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};
  const auto* data = static_cast<const char*>(view.buf);
  size_t size = static_cast<size_t>(view.len);
  if (size >= RELEASE_GIL_BYTES) {
    nb::gil_scoped_release unlocked;
    hasher.update(data, size);
  } else {
    hasher.update(data, size);
  }
}

nb::dict file_dict(const pv::FileDigest& f) {
  nb::dict d;
  d["path"] = f.path;
  d["bytes"] = f.bytes;
  d["hash"] = f.hash.text();
  return d;
}

}  // namespace

void rldk_py::bind_provenance(nb::module_& m) {
  nb::class_<pv::ContentHasher>(m, "Hasher",
                                "Streaming XXH3-128 over buffers and text; digest() may be read at any point.")
      .def(nb::init<>())
      .def("update", [](pv::ContentHasher& h, nb::handle obj) { update_from_buffer(h, obj); }, "data"_a,
           "Add the bytes of a C-contiguous buffer (bytes, bytearray, memoryview, NumPy array).")
      .def("update_text", [](pv::ContentHasher& h, const std::string& text) { h.update(text); }, "text"_a,
           "Add the UTF-8 bytes of a str.")
      .def("hexdigest", [](const pv::ContentHasher& h) { return h.digest().hex(); }, "32 hex digits.")
      .def("digest", [](const pv::ContentHasher& h) { return h.digest().text(); }, "\"xxh3-128:<32 hex digits>\".")
      .def_prop_ro("bytes", [](const pv::ContentHasher& h) { return h.bytes(); }, "How many bytes were hashed.");

  m.def("hash_bytes", [](nb::handle obj) {
        pv::ContentHasher h;
        update_from_buffer(h, obj);
        return h.digest().text();
      }, "data"_a, "XXH3-128 of a buffer, as \"xxh3-128:<hex>\".");

  m.def("hash_files", [](const std::vector<std::string>& paths, unsigned threads) {
        rldk::Result<std::vector<pv::FileDigest>> result = std::vector<pv::FileDigest>{};
        {
          nb::gil_scoped_release unlocked;
          result = pv::hash_files(paths, threads);
        }
        nb::list out;
        for (const auto& f : unwrap(std::move(result))) out.append(file_dict(f));
        return out;
      }, "paths"_a, "threads"_a = 0, "Every byte of each file, hashed in parallel; a list of {path, bytes, hash}.");

  m.def("hash_tree", [](const std::vector<std::string>& paths, const std::string& root, unsigned threads) {
        rldk::Result<pv::TreeDigest> result = pv::TreeDigest{};
        {
          nb::gil_scoped_release unlocked;
          result = pv::hash_tree(paths, root, threads);
        }
        pv::TreeDigest tree = unwrap(std::move(result));
        nb::dict d;
        nb::list files;
        for (const auto& f : tree.files) files.append(file_dict(f));
        d["files"] = files;
        d["root"] = tree.root.text();
        d["bytes"] = tree.bytes;
        return d;
      }, "paths"_a, "root"_a = "", "threads"_a = 0,
      "The files under paths (folders walked), hashed in parallel, with their content root.");

  m.def("lineage_record", [](const std::string& manifest, const std::vector<std::string>& paths,
                             const std::string& name, const std::vector<std::string>& inputs,
                             const std::string& command, const std::string& script, const std::string& transform,
                             unsigned threads) {
        pv::LineageRecordOptions options{paths, name, inputs, command, script, transform, threads};
        rldk::Result<pv::LineageRecorded> result = pv::LineageRecorded{};
        {
          nb::gil_scoped_release unlocked;
          result = pv::lineage_record(manifest, options);
        }
        return unwrap(std::move(result)).manifest.dump(-1);
      }, "manifest"_a, "paths"_a, "name"_a = "", "inputs"_a = std::vector<std::string>{}, "command"_a = "",
      "script"_a = "", "transform"_a = "", "threads"_a = 0);

  m.def("lineage_verify", [](const std::string& manifest, unsigned threads) {
        rldk::Result<pv::LineageVerification> result = pv::LineageVerification{};
        {
          nb::gil_scoped_release unlocked;
          result = pv::lineage_verify(manifest, threads);
        }
        return pv::lineage_verification_json(unwrap(std::move(result))).dump(-1);
      }, "manifest"_a, "threads"_a = 0);

  m.def("lineage_graph", [](const std::string& manifest, const std::string& format) {
        pv::GraphFormat f = format == "mermaid" ? pv::GraphFormat::mermaid
                            : format == "dot"   ? pv::GraphFormat::dot
                                                : pv::GraphFormat::text;
        if (format != "mermaid" && format != "dot" && format != "text") {
          raise(rldk::Error{rldk::ErrorCode::invalid_argument, "format must be text, mermaid or dot", format});
        }
        return unwrap(pv::lineage_graph(manifest, f));
      }, "manifest"_a, "format"_a = "text");

  m.def("lineage_html", [](const std::string& manifest) { return unwrap(pv::lineage_html(manifest)); },
        "manifest"_a);

  m.def("track_diff_json", [](const std::string& a, const std::string& b) {
        return pv::manifest_diff_json(unwrap(pv::diff_run_manifests(a, b))).dump(-1);
      }, "a"_a, "b"_a);
}
