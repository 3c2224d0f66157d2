#include "engine/weights/StateDictFile.h"

#include "engine/data/DataError.h"

#include <caffe2/serialize/inline_container.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <variant>

namespace hearth {
namespace {

// A value on the pickle machine's stack.
struct Value;
using ValuePtr = std::shared_ptr<Value>;
struct Global { std::string module, name; };
struct Storage { std::string key; torch::ScalarType dtype; };
struct Mark {};
struct Value {
    std::variant<std::monostate, int64_t, double, bool, std::string, std::vector<ValuePtr>,
                 std::vector<std::pair<ValuePtr, ValuePtr>>, Global, Storage, torch::Tensor, Mark>
        v;
    enum Kind { None, Int, Float, Bool, Str, Tuple, Dict, GlobalKind, StorageKind, TensorKind, MarkKind };
    Kind kind() const { return static_cast<Kind>(v.index()); }
};

template <typename T>
ValuePtr make(T x) {
    auto p = std::make_shared<Value>();
    p->v = std::move(x);
    return p;
}

const char* kindName(Value::Kind k) {
    static const char* names[] = {"None", "int", "float", "bool", "str", "tuple", "dict", "class", "storage", "tensor", "mark"};
    return names[k];
}

torch::ScalarType storageType(const std::string& name, const std::string& path) {
    static const std::map<std::string, torch::ScalarType> types = {
        {"FloatStorage", torch::kFloat32}, {"DoubleStorage", torch::kFloat64}, {"HalfStorage", torch::kFloat16},
        {"BFloat16Storage", torch::kBFloat16}, {"LongStorage", torch::kInt64}, {"IntStorage", torch::kInt32},
        {"ShortStorage", torch::kInt16}, {"CharStorage", torch::kInt8}, {"ByteStorage", torch::kUInt8},
        {"BoolStorage", torch::kBool}};
    const auto it = types.find(name);
    if (it == types.end()) throw DataError(path + ": a storage of type torch." + name + ", which Hearth does not read");
    return it->second;
}

class Machine {
public:
    Machine(caffe2::serialize::PyTorchStreamReader& reader, std::string path) : reader_(reader), path_(std::move(path)) {}

    ValuePtr run(const uint8_t* p, size_t n) {
        const uint8_t* end = p + n;
        auto need = [&](size_t k) {
            if (static_cast<size_t>(end - p) < k) fail("data.pkl ends in the middle of an instruction");
        };
        auto u32 = [&] { need(4); uint32_t v; std::memcpy(&v, p, 4); p += 4; return v; };
        auto line = [&] {
            const uint8_t* nl = static_cast<const uint8_t*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
            if (!nl) fail("data.pkl has an unterminated name");
            std::string s(reinterpret_cast<const char*>(p), static_cast<size_t>(nl - p));
            p = nl + 1;
            return s;
        };
        while (p < end) {
            const uint8_t op = *p++;
            switch (op) {
                case 0x80: need(1); ++p; break;                                   // PROTO
                case 0x95: need(8); p += 8; break;                                // FRAME
                case '.': return pop();                                           // STOP
                case '(': stack_.push_back(make(Mark{})); break;                  // MARK
                case ')': stack_.push_back(make(std::vector<ValuePtr>{})); break; // EMPTY_TUPLE
                case '}': stack_.push_back(make(std::vector<std::pair<ValuePtr, ValuePtr>>{})); break;   // EMPTY_DICT
                case 'N': stack_.push_back(make(std::monostate{})); break;
                case 0x88: stack_.push_back(make(true)); break;                   // NEWTRUE
                case 0x89: stack_.push_back(make(false)); break;                  // NEWFALSE
                case 'K': need(1); stack_.push_back(make(int64_t{*p++})); break;  // BININT1
                case 'M': { need(2); uint16_t v; std::memcpy(&v, p, 2); p += 2; stack_.push_back(make(int64_t{v})); break; }
                case 'J': { need(4); int32_t v; std::memcpy(&v, p, 4); p += 4; stack_.push_back(make(int64_t{v})); break; }
                case 0x8a: {                                                      // LONG1
                    need(1);
                    const size_t k = *p++;
                    need(k);
                    if (k > 8) fail("an integer wider than 64 bits");
                    int64_t v = 0;
                    for (size_t i = 0; i < k; ++i) v |= static_cast<int64_t>(p[i]) << (8 * i);
                    if (k > 0 && k < 8 && (p[k - 1] & 0x80)) v -= int64_t{1} << (8 * k);
                    p += k;
                    stack_.push_back(make(v));
                    break;
                }
                case 'G': {                                                       // BINFLOAT (big-endian)
                    need(8);
                    uint64_t bits = 0;
                    for (int i = 0; i < 8; ++i) bits = (bits << 8) | p[i];
                    p += 8;
                    double d;
                    std::memcpy(&d, &bits, 8);
                    stack_.push_back(make(d));
                    break;
                }
                case 'X': { const uint32_t k = u32(); need(k); stack_.push_back(make(std::string(reinterpret_cast<const char*>(p), k))); p += k; break; }
                case 0x8c: { need(1); const size_t k = *p++; need(k); stack_.push_back(make(std::string(reinterpret_cast<const char*>(p), k))); p += k; break; }
                case 'c': { std::string module = line(); std::string name = line(); stack_.push_back(make(Global{module, name})); break; }
                case 'q': need(1); memo(*p++); break;                             // BINPUT
                case 'r': memo(u32()); break;                                     // LONG_BINPUT
                case 0x94: memo(memo_.size()); break;                             // MEMOIZE
                case 'h': need(1); stack_.push_back(recall(*p++)); break;         // BINGET
                case 'j': stack_.push_back(recall(u32())); break;                 // LONG_BINGET
                case 't': stack_.push_back(make(popToMark())); break;             // TUPLE
                case 0x85: { auto a = pop(); stack_.push_back(make(std::vector<ValuePtr>{a})); break; }
                case 0x86: { auto b = pop(), a = pop(); stack_.push_back(make(std::vector<ValuePtr>{a, b})); break; }
                case 0x87: { auto c = pop(), b = pop(), a = pop(); stack_.push_back(make(std::vector<ValuePtr>{a, b, c})); break; }
                case 's': { auto v = pop(), k = pop(); dictOf(top()).emplace_back(k, v); break; }   // SETITEM
                case 'u': {                                                       // SETITEMS
                    auto items = popToMark();
                    auto& d = dictOf(top());
                    for (size_t i = 0; i + 1 < items.size(); i += 2) d.emplace_back(items[i], items[i + 1]);
                    break;
                }
                case 'b': pop(); break;                                           // BUILD: an OrderedDict's _metadata
                case 'R': { auto args = pop(); auto fn = pop(); stack_.push_back(reduce(*fn, *args)); break; }
                case 'Q': stack_.push_back(persistent(*pop())); break;            // BINPERSID
                default: {
                    char hex[8];
                    std::snprintf(hex, sizeof hex, "0x%02x", op);
                    fail(std::string("pickle instruction ") + hex + " (not part of a state_dict)");
                }
            }
        }
        fail("data.pkl has no STOP instruction");
    }

private:
    [[noreturn]] void fail(const std::string& what) const { throw DataError(path_ + ": " + what); }
    ValuePtr pop() {
        if (stack_.empty()) fail("data.pkl pops an empty stack");
        auto v = stack_.back();
        stack_.pop_back();
        return v;
    }
    ValuePtr& top() {
        if (stack_.empty()) fail("data.pkl reads an empty stack");
        return stack_.back();
    }
    std::vector<ValuePtr> popToMark() {
        std::vector<ValuePtr> items;
        while (true) {
            auto v = pop();
            if (v->kind() == Value::MarkKind) break;
            items.push_back(v);
        }
        return {items.rbegin(), items.rend()};
    }
    void memo(size_t i) {
        if (memo_.size() <= i) memo_.resize(i + 1);
        memo_[i] = top();
    }
    ValuePtr recall(size_t i) {
        if (i >= memo_.size() || !memo_[i]) fail("data.pkl recalls an unset memo entry");
        return memo_[i];
    }
    std::vector<std::pair<ValuePtr, ValuePtr>>& dictOf(ValuePtr& v) {
        if (v->kind() != Value::Dict) fail(std::string("data.pkl sets items of a ") + kindName(v->kind()));
        return std::get<std::vector<std::pair<ValuePtr, ValuePtr>>>(v->v);
    }
    const std::vector<ValuePtr>& tupleOf(const Value& v) {
        if (v.kind() != Value::Tuple) fail(std::string("expected a tuple, found a ") + kindName(v.kind()));
        return std::get<std::vector<ValuePtr>>(v.v);
    }
    std::vector<int64_t> ints(const Value& v) {
        std::vector<int64_t> out;
        for (const auto& x : tupleOf(v)) {
            if (x->kind() != Value::Int) fail("expected a tuple of integers (a tensor's size or stride)");
            out.push_back(std::get<int64_t>(x->v));
        }
        return out;
    }

    ValuePtr persistent(const Value& pid) {
        // ('storage', torch.FloatStorage, key, location, numel)
        const auto& t = tupleOf(pid);
        if (t.size() < 3 || t[1]->kind() != Value::GlobalKind || t[2]->kind() != Value::Str)
            fail("a persistent id that is not a storage");
        const std::string& key = std::get<std::string>(t[2]->v);
        return make(Storage{key, storageType(std::get<Global>(t[1]->v).name, path_)});
    }

    torch::Tensor storageTensor(const Storage& s) {
        const auto cached = storages_.find(s.key);
        if (cached != storages_.end()) return cached->second;
        const std::string record = "data/" + s.key;
        if (!reader_.hasRecord(record)) fail("the archive lacks the storage record " + record);
        auto [data, bytes] = reader_.getRecord(record);
        const size_t item = c10::elementSize(s.dtype);
        auto flat = torch::empty({static_cast<int64_t>(bytes / item)}, torch::TensorOptions().dtype(s.dtype));
        std::memcpy(flat.data_ptr(), data.get(), bytes);
        storages_[s.key] = flat;
        return flat;
    }

    ValuePtr reduce(const Value& fn, const Value& args) {
        if (fn.kind() != Value::GlobalKind) fail(std::string("calls a ") + kindName(fn.kind()));
        const Global& g = std::get<Global>(fn.v);
        const std::string name = g.module + "." + g.name;
        if (name == "collections.OrderedDict") return make(std::vector<std::pair<ValuePtr, ValuePtr>>{});
        const auto& a = tupleOf(args);
        if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") {
            if (a.size() < 4 || a[0]->kind() != Value::StorageKind || a[1]->kind() != Value::Int)
                fail("a tensor whose storage or offset is missing");
            const torch::Tensor flat = storageTensor(std::get<Storage>(a[0]->v));
            const auto size = ints(*a[2]), stride = ints(*a[3]);
            int64_t last = std::get<int64_t>(a[1]->v);
            for (size_t i = 0; i < size.size(); ++i) last += size[i] > 0 ? (size[i] - 1) * stride[i] : 0;
            if (last >= flat.numel() && flat.numel() > 0) fail("a tensor that reaches past its storage");
            return make(flat.as_strided(size, stride, std::get<int64_t>(a[1]->v)));
        }
        if (name == "torch._utils._rebuild_parameter" || name == "torch._utils._rebuild_parameter_with_state") {
            if (a.empty() || a[0]->kind() != Value::TensorKind) fail("a parameter without its tensor");
            return a[0];
        }
        fail("it holds a " + name + " object, not only tensors: save a state_dict (torch.save(model.state_dict(), "
             "path)), not a pickled model or other object");
    }

    caffe2::serialize::PyTorchStreamReader& reader_;
    std::string path_;
    std::vector<ValuePtr> stack_, memo_;
    std::map<std::string, torch::Tensor> storages_;
};

}  // namespace

std::map<std::string, torch::Tensor> readStateDictFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw DataError(path + ": cannot read the file");
    char magic[4] = {};
    in.read(magic, 4);
    if (std::memcmp(magic, "PK\x03\x04", 4) != 0) {
        // Not a zip: the legacy torch.save format, or not PyTorch at all.
        in.seekg(0);
        std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        torch::IValue value;
        try {
            value = torch::pickle_load(bytes);
        } catch (const std::exception& e) {
            std::string what = e.what();
            what = what.substr(0, what.find('\n'));
            throw DataError(path + ": LibTorch cannot read this file as a state_dict saved by torch.save (" + what +
                            "); save the weights as safetensors, or with torch.save(model.state_dict(), path) "
                            "from PyTorch 1.6 or newer");
        }
        if (!value.isGenericDict())
            throw DataError(path + ": expected a dict of tensors (a state_dict), found " + value.tagKind());
        std::map<std::string, torch::Tensor> out;
        for (const auto& item : value.toGenericDict()) {
            if (!item.key().isString() || !item.value().isTensor())
                throw DataError(path + ": expected a dict of name -> tensor, found an entry of " +
                                item.key().tagKind() + " -> " + item.value().tagKind());
            out.emplace(item.key().toStringRef(), item.value().toTensor());
        }
        return out;
    }
    in.close();
    std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
    try {
        reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
    } catch (const std::exception& e) {
        std::string what = e.what();
        throw DataError(path + ": not a PyTorch archive (" + what.substr(0, what.find('\n')) + ")");
    }
    if (!reader->hasRecord("data.pkl"))
        throw DataError(path + ": a zip without data.pkl: not a file written by torch.save (a TorchScript module? "
                               "use model.name=torchscript)");
    auto [pickle, size] = reader->getRecord("data.pkl");
    Machine machine(*reader, path);
    const ValuePtr root = machine.run(static_cast<const uint8_t*>(pickle.get()), size);
    if (root->kind() != Value::Dict)
        throw DataError(path + std::string(": expected a dict of tensors (a state_dict), found a ") + kindName(root->kind()));
    std::map<std::string, torch::Tensor> out;
    for (const auto& [k, v] : std::get<std::vector<std::pair<ValuePtr, ValuePtr>>>(root->v)) {
        if (k->kind() != Value::Str || v->kind() != Value::TensorKind)
            throw DataError(path + std::string(": expected a dict of name -> tensor, found an entry of ") +
                            kindName(k->kind()) + " -> " + kindName(v->kind()) +
                            " (a checkpoint dict? save model.state_dict() itself)");
        out.emplace(std::get<std::string>(k->v), std::get<torch::Tensor>(v->v));
    }
    return out;
}

}  // namespace hearth
