// The restricted pickle VM. Opcodes outside the table below (INST, OBJ, NEWOBJ, EXT*, PERSID, the protocol-5 buffer
// opcodes, ...) are refused; so is any GLOBAL outside the allowlist, at the GLOBAL itself.
#include "checkpoint/restricted_pickle.h"

#include <cstring>
#include <set>
#include <unordered_map>

namespace rldk::ckpt {
namespace {

using V = PickleValue;
using K = PickleValue::Kind;

struct StorageClass {
  const char* name;
  DType dtype;
};
constexpr StorageClass STORAGE_CLASSES[] = {
    {"torch.FloatStorage", DType::F32},   {"torch.DoubleStorage", DType::F64}, {"torch.HalfStorage", DType::F16},
    {"torch.BFloat16Storage", DType::BF16}, {"torch.LongStorage", DType::I64}, {"torch.IntStorage", DType::I32},
    {"torch.ShortStorage", DType::I16},   {"torch.CharStorage", DType::I8},    {"torch.ByteStorage", DType::U8},
    {"torch.BoolStorage", DType::BOOL},
};
struct TorchDType {
  const char* name;
  DType dtype;
};
constexpr TorchDType TORCH_DTYPES[] = {
    {"torch.float32", DType::F32}, {"torch.float", DType::F32},     {"torch.float64", DType::F64},
    {"torch.double", DType::F64},  {"torch.float16", DType::F16},   {"torch.half", DType::F16},
    {"torch.bfloat16", DType::BF16}, {"torch.int64", DType::I64},   {"torch.long", DType::I64},
    {"torch.int32", DType::I32},   {"torch.int", DType::I32},       {"torch.int16", DType::I16},
    {"torch.short", DType::I16},   {"torch.int8", DType::I8},       {"torch.uint8", DType::U8},
    {"torch.uint16", DType::U16},  {"torch.uint32", DType::U32},    {"torch.uint64", DType::U64},
    {"torch.bool", DType::BOOL},   {"torch.float8_e4m3fn", DType::F8_E4M3}, {"torch.float8_e5m2", DType::F8_E5M2},
    {"torch.float8_e4m3fnuz", DType::F8_E4M3FNUZ}, {"torch.float8_e5m2fnuz", DType::F8_E5M2FNUZ},
};
// Callables REDUCE may apply; each is implemented below as a value constructor.
constexpr const char* CALLABLES[] = {
    "collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3",
    "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state", "torch.Size",
};

bool storage_class(const std::string& name, DType& dtype, bool& untyped) {
  for (const auto& s : STORAGE_CLASSES) {
    if (name == s.name) {
      dtype = s.dtype;
      untyped = false;
      return true;
    }
  }
  if (name == "torch.storage.UntypedStorage" || name == "torch.UntypedStorage") {
    dtype = DType::U8;
    untyped = true;
    return true;
  }
  return false;
}

bool torch_dtype(const std::string& name, DType& dtype) {
  for (const auto& d : TORCH_DTYPES) {
    if (name == d.name) {
      dtype = d.dtype;
      return true;
    }
  }
  return false;
}

bool allowed_global(const std::string& name) {
  DType d;
  bool u;
  if (storage_class(name, d, u) || torch_dtype(name, d)) return true;
  for (const char* c : CALLABLES) {
    if (name == c) return true;
  }
  return false;
}

class Vm {
 public:
  Vm(std::string_view data, PickleDocument& doc) : d_(data), doc_(doc) {}

  bool run(std::string& error) {
    bool ok = loop();
    if (!ok) error = error_ + " (at byte " + std::to_string(op_at_) + " of the pickle)";
    return ok;
  }

 private:
  bool fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  V* make(K kind) {
    if (doc_.arena.size() >= PICKLE_MAX_VALUES) return nullptr;
    doc_.arena.push_back(std::make_unique<V>());
    doc_.arena.back()->kind = kind;
    return doc_.arena.back().get();
  }
  bool push(V* v) {
    if (v == nullptr) return fail("pickle builds more than " + std::to_string(PICKLE_MAX_VALUES) + " values");
    stack_.push_back(v);
    return true;
  }
  bool need(size_t n) {
    if (pos_ + n > d_.size()) return fail("pickle is truncated");
    return true;
  }
  uint64_t le(size_t n) {
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(d_[pos_ + i]);
    pos_ += n;
    return v;
  }
  bool pop(V*& out) {
    if (stack_.size() <= mark_floor()) return fail("pickle stack underflow");
    out = stack_.back();
    stack_.pop_back();
    return true;
  }
  size_t mark_floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // The items above the topmost MARK, removed from the stack along with the mark.
  bool pop_mark(std::vector<V*>& items) {
    if (marks_.empty()) return fail("pickle has no MARK to pop to");
    size_t m = marks_.back();
    marks_.pop_back();
    items.assign(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return true;
  }
  bool memo_put(uint64_t key) {
    if (stack_.empty()) return fail("memo store with an empty stack");
    if (memo_.size() >= PICKLE_MAX_VALUES) return fail("pickle memo too large");
    memo_[key] = stack_.back();
    return true;
  }
  bool memo_get(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) return fail("memo key " + std::to_string(key) + " was never stored");
    stack_.push_back(it->second);
    return true;
  }
  bool string_op(size_t len_bytes, K kind) {
    if (!need(len_bytes)) return false;
    uint64_t n = le(len_bytes);
    if (n > d_.size() - pos_) return fail("pickle string runs past the end");
    V* v = make(kind);
    if (v != nullptr) v->text = std::string(d_.substr(pos_, n));
    pos_ += n;
    return push(v);
  }
  bool global(std::string name) {
    if (!allowed_global(name)) {
      return fail("global " + name + " is not allowed (only tensor data may be loaded; nothing was run)");
    }
    V* v = make(K::global);
    if (v != nullptr) v->text = std::move(name);
    return push(v);
  }
  bool set_items(V* dict, const std::vector<V*>& kv) {
    if (dict->kind != K::dict) return fail("SETITEM(S) on something that is not a dict");
    if (kv.size() % 2 != 0) return fail("SETITEMS with an odd number of items");
    for (size_t i = 0; i < kv.size(); i += 2) {
      // Python dict semantics: a repeated key replaces the value in place.
      bool replaced = false;
      if (kv[i]->kind == K::string) {
        for (auto& e : dict->entries) {
          if (e.first->kind == K::string && e.first->text == kv[i]->text) {
            e.second = kv[i + 1];
            replaced = true;
            break;
          }
        }
      }
      if (!replaced) dict->entries.emplace_back(kv[i], kv[i + 1]);
    }
    return true;
  }
  static bool as_uint(const V* v, uint64_t& out) {
    if (v->kind != K::integer || v->integer < 0) return false;
    out = static_cast<uint64_t>(v->integer);
    return true;
  }
  static bool as_uint_tuple(const V* v, std::vector<uint64_t>& out) {
    if (v->kind != K::tuple && v->kind != K::list) return false;
    out.clear();
    for (const V* x : v->items) {
      uint64_t u = 0;
      if (!as_uint(x, u)) return false;
      out.push_back(u);
    }
    return true;
  }
  bool rebuild_tensor(const V* args, bool v3, V*& out) {
    size_t need_args = v3 ? 7 : 6;
    if (args->items.size() < need_args) return fail("tensor rebuild with too few arguments");
    const V* st = args->items[0];
    if (st->kind != K::storage) return fail("tensor rebuild without a storage");
    V* t = make(K::tensor);
    if (t == nullptr) return push(nullptr);
    t->tensor.storage = &st->storage;
    t->tensor.dtype = st->storage.dtype;
    if (!as_uint(args->items[1], t->tensor.offset)) return fail("tensor rebuild with a bad storage offset");
    if (!as_uint_tuple(args->items[2], t->tensor.shape)) return fail("tensor rebuild with a bad size");
    const V* stride = args->items[3];
    if (stride->kind != K::tuple || stride->items.size() != t->tensor.shape.size()) {
      return fail("tensor rebuild with a bad stride");
    }
    for (const V* s : stride->items) {
      if (s->kind != K::integer) return fail("tensor rebuild with a bad stride");
      t->tensor.stride.push_back(s->integer);
    }
    if (v3) {
      const V* dt = args->items[6];
      if (dt->kind != K::global || !torch_dtype(dt->text, t->tensor.dtype)) return fail("tensor rebuild with a bad dtype");
    } else if (st->storage.untyped) {
      return fail("_rebuild_tensor_v2 over an untyped storage");
    }
    out = t;
    return true;
  }
  bool reduce() {
    V *args = nullptr, *fn = nullptr;
    if (!pop(args) || !pop(fn)) return false;
    if (fn->kind != K::global) return fail("REDUCE on something that is not an allowed callable");
    if (args->kind != K::tuple) return fail("REDUCE arguments are not a tuple");
    const std::string& name = fn->text;
    V* out = nullptr;
    if (name == "collections.OrderedDict") {
      out = make(K::dict);
      if (out == nullptr) return push(nullptr);
      if (!args->items.empty()) {
        // OrderedDict(iterable of pairs)
        const V* src = args->items[0];
        if (src->kind != K::list && src->kind != K::tuple) return fail("OrderedDict from something that is not pairs");
        for (const V* p : src->items) {
          if ((p->kind != K::tuple && p->kind != K::list) || p->items.size() != 2) return fail("OrderedDict item is not a pair");
          out->entries.emplace_back(p->items[0], p->items[1]);
        }
      }
    } else if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor_v3") {
      if (!rebuild_tensor(args, name.back() == '3', out)) return false;
    } else if (name == "torch._utils._rebuild_parameter" || name == "torch._utils._rebuild_parameter_with_state") {
      if (args->items.empty() || args->items[0]->kind != K::tensor) return fail("parameter rebuild without a tensor");
      out = const_cast<V*>(args->items[0]);
    } else if (name == "torch.Size") {
      out = make(K::tuple);
      if (out == nullptr) return push(nullptr);
      if (!args->items.empty()) out->items = args->items[0]->items;
    } else {
      // Storage classes and dtypes are allowed as values, not as calls.
      return fail("REDUCE on " + name + " is not allowed (nothing was run)");
    }
    return push(out);
  }
  bool persistent_id() {
    V* pid = nullptr;
    if (!pop(pid)) return false;
    if (pid->kind != K::tuple || pid->items.size() < 5 || pid->items[0]->kind != K::string ||
        pid->items[0]->text != "storage") {
      return fail("persistent id is not a torch storage reference");
    }
    const V* cls = pid->items[1];
    V* st = make(K::storage);
    if (st == nullptr) return push(nullptr);
    if (cls->kind != K::global || !storage_class(cls->text, st->storage.dtype, st->storage.untyped)) {
      return fail("persistent id names an unknown storage class");
    }
    if (pid->items[2]->kind != K::string) return fail("storage key is not a string");
    st->storage.key = pid->items[2]->text;
    if (!as_uint(pid->items[4], st->storage.numel)) return fail("storage size is not a non-negative integer");
    return push(st);
  }

  bool loop() {
    for (;;) {
      op_at_ = pos_;
      if (!need(1)) return false;
      auto op = static_cast<unsigned char>(d_[pos_++]);
      switch (op) {
        case 0x80:  // PROTO
          if (!need(1)) return false;
          if (static_cast<unsigned char>(d_[pos_]) > 5) return fail("unsupported pickle protocol");
          ++pos_;
          break;
        case 0x95:  // FRAME: a length prefix only, the framed opcodes follow inline
          if (!need(8)) return false;
          pos_ += 8;
          break;
        case '.': {  // STOP
          V* root = nullptr;
          if (!pop(root)) return false;
          doc_.root = root;
          return true;
        }
        case '(': marks_.push_back(stack_.size()); break;  // MARK
        case '0': {  // POP
          V* x = nullptr;
          if (!pop(x)) return false;
          break;
        }
        case '1': {  // POP_MARK
          std::vector<V*> items;
          if (!pop_mark(items)) return false;
          break;
        }
        case '2':  // DUP
          if (stack_.size() <= mark_floor()) return fail("DUP on an empty stack");
          stack_.push_back(stack_.back());
          break;
        case 'N': if (!push(make(K::none))) return false; break;
        case 0x88: case 0x89: {  // NEWTRUE, NEWFALSE
          V* v = make(K::boolean);
          if (v != nullptr) v->boolean = op == 0x88;
          if (!push(v)) return false;
          break;
        }
        case 'J': case 'K': case 'M': {  // BININT (signed 4), BININT1, BININT2
          size_t n = op == 'J' ? 4 : op == 'K' ? 1 : 2;
          if (!need(n)) return false;
          uint64_t raw = le(n);
          V* v = make(K::integer);
          if (v != nullptr) v->integer = op == 'J' ? static_cast<int32_t>(static_cast<uint32_t>(raw)) : static_cast<int64_t>(raw);
          if (!push(v)) return false;
          break;
        }
        case 0x8a: {  // LONG1: little-endian two's complement of n bytes
          if (!need(1)) return false;
          size_t n = static_cast<unsigned char>(d_[pos_++]);
          if (!need(n)) return false;
          if (n > 8) return fail("integer wider than 64 bits");
          uint64_t raw = le(n);
          if (n > 0 && n < 8 && (raw >> (8 * n - 1)) & 1) raw |= ~0ULL << (8 * n);  // sign-extend
          V* v = make(K::integer);
          if (v != nullptr) v->integer = static_cast<int64_t>(raw);
          if (!push(v)) return false;
          break;
        }
        case 'G': {  // BINFLOAT: big-endian double
          if (!need(8)) return false;
          uint64_t raw = 0;
          for (int i = 0; i < 8; ++i) raw = (raw << 8) | static_cast<unsigned char>(d_[pos_++]);
          V* v = make(K::floating);
          if (v != nullptr) std::memcpy(&v->floating, &raw, 8);
          if (!push(v)) return false;
          break;
        }
        case 'X': if (!string_op(4, K::string)) return false; break;     // BINUNICODE
        case 0x8c: if (!string_op(1, K::string)) return false; break;   // SHORT_BINUNICODE
        case 0x8d: if (!string_op(8, K::string)) return false; break;   // BINUNICODE8
        case 'B': if (!string_op(4, K::bytes)) return false; break;      // BINBYTES
        case 'C': if (!string_op(1, K::bytes)) return false; break;      // SHORT_BINBYTES
        case 0x8e: if (!string_op(8, K::bytes)) return false; break;    // BINBYTES8
        case '}': if (!push(make(K::dict))) return false; break;         // EMPTY_DICT
        case ']': if (!push(make(K::list))) return false; break;         // EMPTY_LIST
        case ')': if (!push(make(K::tuple))) return false; break;        // EMPTY_TUPLE
        case 'd': case 'l': case 't': {  // DICT, LIST, TUPLE from the items above MARK
          std::vector<V*> items;
          if (!pop_mark(items)) return false;
          V* v = make(op == 'd' ? K::dict : op == 'l' ? K::list : K::tuple);
          if (v == nullptr) return push(nullptr);
          if (op == 'd') {
            if (!set_items(v, items)) return false;
          } else {
            v->items.assign(items.begin(), items.end());
          }
          if (!push(v)) return false;
          break;
        }
        case 0x85: case 0x86: case 0x87: {  // TUPLE1-3
          size_t n = op - 0x84u;
          if (stack_.size() < mark_floor() + n) return fail("tuple of more items than the stack holds");
          V* v = make(K::tuple);
          if (v == nullptr) return push(nullptr);
          v->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
          stack_.resize(stack_.size() - n);
          if (!push(v)) return false;
          break;
        }
        case 'a': {  // APPEND
          V *x = nullptr, *list = nullptr;
          if (!pop(x) || !pop(list)) return false;
          if (list->kind != K::list) return fail("APPEND to something that is not a list");
          list->items.push_back(x);
          stack_.push_back(list);
          break;
        }
        case 'e': {  // APPENDS
          std::vector<V*> items;
          if (!pop_mark(items)) return false;
          if (stack_.size() <= mark_floor() || stack_.back()->kind != K::list) return fail("APPENDS to something that is not a list");
          stack_.back()->items.insert(stack_.back()->items.end(), items.begin(), items.end());
          break;
        }
        case 's': {  // SETITEM
          V *value = nullptr, *key = nullptr;
          if (!pop(value) || !pop(key)) return false;
          if (stack_.size() <= mark_floor()) return fail("SETITEM without a dict");
          if (!set_items(stack_.back(), {key, value})) return false;
          break;
        }
        case 'u': {  // SETITEMS
          std::vector<V*> items;
          if (!pop_mark(items)) return false;
          if (stack_.size() <= mark_floor()) return fail("SETITEMS without a dict");
          if (!set_items(stack_.back(), items)) return false;
          break;
        }
        case 'q': if (!need(1) || !memo_put(le(1))) return false; break;   // BINPUT
        case 'r': if (!need(4) || !memo_put(le(4))) return false; break;   // LONG_BINPUT
        case 0x94: if (!memo_put(memo_.size())) return false; break;       // MEMOIZE
        case 'h': if (!need(1) || !memo_get(le(1))) return false; break;   // BINGET
        case 'j': if (!need(4) || !memo_get(le(4))) return false; break;   // LONG_BINGET
        case 'c': {  // GLOBAL "module\nname\n"
          size_t nl1 = d_.find('\n', pos_);
          if (nl1 == std::string_view::npos) return fail("GLOBAL is truncated");
          size_t nl2 = d_.find('\n', nl1 + 1);
          if (nl2 == std::string_view::npos) return fail("GLOBAL is truncated");
          std::string name = std::string(d_.substr(pos_, nl1 - pos_)) + "." + std::string(d_.substr(nl1 + 1, nl2 - nl1 - 1));
          pos_ = nl2 + 1;
          if (!global(std::move(name))) return false;
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          V *name = nullptr, *module = nullptr;
          if (!pop(name) || !pop(module)) return false;
          if (name->kind != K::string || module->kind != K::string) return fail("STACK_GLOBAL of non-strings");
          if (!global(module->text + "." + name->text)) return false;
          break;
        }
        case 'Q': if (!persistent_id()) return false; break;  // BINPERSID
        case 'R': if (!reduce()) return false; break;         // REDUCE
        case 'b': {  // BUILD: object state (a Parameter's or OrderedDict's attributes); kept out of the result
          V *state = nullptr;
          if (!pop(state)) return false;
          if (stack_.size() <= mark_floor()) return fail("BUILD without an object");
          K target = stack_.back()->kind;
          if (target != K::tensor && target != K::dict) return fail("BUILD on something other than a tensor or dict");
          break;
        }
        default: {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02x", op);
          return fail(std::string("pickle opcode ") + hex + " is not allowed (only tensor data may be loaded)");
        }
      }
    }
  }

  std::string_view d_;
  PickleDocument& doc_;
  size_t pos_ = 0, op_at_ = 0;
  std::vector<V*> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, V*> memo_;
  std::string error_;
};

void collect(const V* v, const std::string& prefix, int depth, std::set<const V*>& seen,
             std::vector<std::pair<std::string, const PickleTensor*>>& out) {
  constexpr int MAX_DEPTH = 16;
  if (depth > MAX_DEPTH || !seen.insert(v).second) return;
  for (const auto& [k, x] : v->entries) {
    std::string key;
    if (k->kind == K::string) key = k->text;
    else if (k->kind == K::integer) key = std::to_string(k->integer);
    else continue;
    std::string name = prefix.empty() ? key : prefix + "." + key;
    if (x->kind == K::tensor) out.emplace_back(name, &x->tensor);
    else if (x->kind == K::dict) collect(x, name, depth + 1, seen, out);
  }
}

}  // namespace

bool load_restricted_pickle(std::string_view data, PickleDocument& doc, std::string& error) {
  doc = PickleDocument{};
  Vm vm(data, doc);
  return vm.run(error);
}

namespace {

void collect_wrapped(const PickleValue* root, int depth,
                     std::vector<std::pair<std::string, const PickleTensor*>>& out) {
  constexpr int MAX_WRAPPERS = 8;
  if (root == nullptr || root->kind != K::dict) return;
  // Training checkpoints wrap the weights: {"state_dict": ...}, {"model": ..., "optimizer": ...}, {"module": ...}.
  if (depth < MAX_WRAPPERS) {
    for (const char* wrapper : {"state_dict", "model_state_dict", "model", "module"}) {
      for (const auto& [k, x] : root->entries) {
        if (k->kind == K::string && k->text == wrapper && x->kind == K::dict) {
          collect_wrapped(x, depth + 1, out);
          if (!out.empty()) return;
        }
      }
    }
  }
  std::set<const V*> seen;
  collect(root, "", 0, seen, out);
}

}  // namespace

void collect_state_dict(const PickleValue* root, std::vector<std::pair<std::string, const PickleTensor*>>& out) {
  collect_wrapped(root, 0, out);
}

}  // namespace rldk::ckpt
