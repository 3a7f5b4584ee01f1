// p4reader: a reader for the subset of P4_16 (TNA) the upstream programs our
// models mirror are written in (p4lang/p4app-switchML dev_root/p4, RC4ML/P4FPGA
// p4/p4fpga.p4). It preprocesses (#include, object- and function-like #define
// with ## pasting, #ifdef/#ifndef/#else/#endif), then parses the declarations
// the checker compares: typedefs, enums, consts, headers and structs, and per
// control its Register / RegisterAction (bodies as expression trees), actions
// and tables with their const entries. Parser states, action bodies and apply
// blocks are read as statements when they stay in the subset the pipeline
// evaluator runs (p4pipe.h); a body outside it is skipped by brace matching
// and marked unread. No P4 compiler is involved.
//
// Errors throw p4src::ReadError naming file:line and what was expected.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace inasim::p4tools::p4src {

struct Loc {
  std::string file;  ///< path as the reader opened it, relative to the source root
  int line = 0;
  std::string str() const { return file + ":" + std::to_string(line); }
};

struct ReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The source breaks a rule of P4_16 itself (its grammar, its types): no
/// compiler would accept it, as opposed to a construct outside the reader's subset.
struct InvalidP4 : ReadError {
  using ReadError::ReadError;
};

struct Token {
  enum class Kind { kIdent, kNumber, kString, kPunct, kEnd } kind = Kind::kEnd;
  std::string text;
  Loc loc;
};

/// Runs the preprocessor over `path` (a file under `root`, e.g. "p4/switchml.p4").
/// Angle-bracket includes (the architecture's own headers) are skipped: the TNA externs are built in.
/// `defines`, if given, receives the object-like macros defined at the end
/// (name -> body tokens joined by spaces; "" for a flag such as `#define SEQ_SUP`).
/// Object-like macros to define differently (a body) or not at all (nullopt)
/// wherever the source #defines them: the program as if recompiled.
using DefineOverrides = std::map<std::string, std::optional<std::string>>;
std::vector<Token> Preprocess(const std::string& root, const std::string& path,
                              std::map<std::string, std::string>* defines = nullptr,
                              const DefineOverrides& overrides = {});
/// Same for in-memory text (the reader's self-test); includes are resolved in `root`.
std::vector<Token> PreprocessText(const std::string& text, const std::string& name, const std::string& root = ".");

/// A type as written: bit<N>, int<N>, bool, or a name (typedef, enum, header, struct).
struct TypeRef {
  enum class Kind { kBit, kInt, kBool, kNamed } kind = Kind::kNamed;
  int width = 0;     ///< bit/int
  std::string name;  ///< kNamed
  std::string str() const;
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;
/// An expression tree. Names keep their dotted path ("ig_md.worker_bitmap",
/// "packet_type_t.CONSUME0"); the evaluator resolves them.
struct Expr {
  /// kList: `{a, b, ...}` (a Checksum's field list), the elements in args.
  enum class Kind { kLiteral, kName, kUnary, kBinary, kCall, kCast, kSlice, kTernary, kList } kind = Kind::kLiteral;
  std::string op;                 ///< unary/binary operator, or the called function's name
  std::vector<ExprPtr> args;      ///< operands / call arguments
  std::string name;               ///< kName
  uint64_t value = 0;             ///< kLiteral
  int width = -1;                 ///< kLiteral: -1 = untyped integer, else the NwV width
  bool is_signed = false;         ///< kLiteral NsV
  bool is_bool = false;           ///< kLiteral `true` / `false` (value 1 / 0, width 1)
  TypeRef type;                   ///< kCast; kCall: a generic call's type argument (`f<T>(x)`), else kNamed ""
  int hi = 0, lo = 0;             ///< kSlice [hi:lo]
  Loc loc;
};

struct Stmt;
using StmtPtr = std::shared_ptr<const Stmt>;
struct Stmt {
  /// kCall: a call statement (`send(192);`, `t.apply();`, `pkt.extract(h);`), the call in rhs.
  /// kExit: `exit;`; kReturn: `return;`.
  enum class Kind { kAssign, kDecl, kIf, kBlock, kCall, kExit, kReturn } kind = Kind::kAssign;
  ExprPtr lhs, rhs;       ///< kAssign (lhs a name or a slice of one); kDecl: rhs (may be null)
  TypeRef type;           ///< kDecl
  std::string name;       ///< kDecl
  ExprPtr cond;           ///< kIf
  std::vector<StmtPtr> then_body, else_body;  ///< kIf; kBlock uses then_body
  Loc loc;
};

struct Field {
  std::string name;
  TypeRef type;
  Loc loc;
};

struct Composite {  ///< header or struct
  std::string name;
  bool is_header = false;
  std::vector<Field> fields;
  Loc loc;
};

struct Enum {
  std::string name;
  TypeRef underlying;  ///< bit<N>; kNamed with empty name for a plain (untyped) enum
  std::vector<std::pair<std::string, uint64_t>> members;
  Loc loc;
};

struct Param {
  std::string direction;  ///< "in", "out", "inout" or ""
  TypeRef type;
  std::string name;
};

struct RegisterDecl {
  std::string name;
  TypeRef element, index;
  uint64_t size = 0;
  Loc loc;
};

struct RegisterActionDecl {
  std::string name, register_name;
  TypeRef element, index, result;
  std::string value_param, result_param;  ///< apply(inout T value, out R result)
  bool direct = false;  ///< a DirectRegisterAction: its cell is the running table entry's (no index)
  std::vector<StmtPtr> body;
  Loc loc;
};

struct ActionDecl {
  std::string name;
  std::vector<Param> params;
  std::vector<StmtPtr> body;
  bool body_read = false;  ///< false: outside the statement subset, skipped
  Loc loc;
};

struct KeyMatch {  ///< one key field of one const entry
  bool dont_care = false;  ///< `_` or `default`
  uint64_t value = 0;
  uint64_t mask = ~uint64_t{0};  ///< all ones unless `&&&`; masked to the key width by the checker
  bool has_mask = false;
};

struct ConstEntry {
  std::vector<KeyMatch> keys;
  std::string action;
  std::vector<uint64_t> args;
  Loc loc;
};

struct TableDecl {
  std::string name;
  std::vector<std::pair<std::string, std::string>> keys;  ///< (field path, match kind)
  std::vector<std::string> actions;
  std::string default_action;
  std::vector<uint64_t> default_args;
  std::vector<ConstEntry> entries;
  bool has_const_entries = false;
  Loc loc;
};

/// An instance a control or parser declares: a control (`Processor() value00;`)
/// or an extern (`Counter<...>(...) c;`, `Random<...>() rng;`, `Checksum() ck;`).
struct Instance {
  std::string type, name;
  std::vector<TypeRef> type_args;  ///< `Random<T>`'s T, ... (empty when not read)
  std::vector<ExprPtr> args;  ///< constructor arguments (a Counter's size, ...)
  Loc loc;
};

struct Control {
  std::string name;
  std::vector<Param> params;
  std::vector<Instance> instances;
  std::vector<Field> locals;  ///< control-level variables (`bit<32> bitmap;`), read by RegisterAction bodies
  std::vector<RegisterDecl> registers;
  std::vector<RegisterActionDecl> register_actions;
  std::vector<ActionDecl> actions;
  std::vector<TableDecl> tables;
  std::vector<StmtPtr> apply;  ///< the apply block
  bool apply_read = false;     ///< false: outside the statement subset (or none), skipped
  Loc loc;
  const Instance* FindInstance(const std::string& n) const;
  const RegisterActionDecl* FindRegisterAction(const std::string& n) const;
  const TableDecl* FindTable(const std::string& n) const;
  const ActionDecl* FindAction(const std::string& n) const;
};

/// One parser state: its statements, then its transition.
struct ParserState {
  std::string name;
  std::vector<StmtPtr> body;
  /// `transition next;` (select empty) or `transition select(select) { cases }`.
  std::string next;
  std::vector<ExprPtr> select;
  struct Case {
    std::vector<KeyMatch> keys;  ///< one per select expression (`default`/`_`: dont_care)
    std::string next;
    Loc loc;
  };
  std::vector<Case> cases;
  Loc loc;
};

struct ParserDecl {
  std::string name;
  std::vector<Param> params;
  std::vector<Field> locals;
  std::vector<Instance> instances;  ///< externs (`Checksum() ck;`)
  std::vector<ParserState> states;
  bool read = false;  ///< false: a state outside the subset; states may be incomplete
  Loc loc;
  const ParserState* FindState(const std::string& n) const;
};

struct Program {
  std::map<std::string, TypeRef> typedefs;
  std::map<std::string, Enum> enums;
  std::map<std::string, Composite> composites;  ///< headers and structs, by name
  std::map<std::string, uint64_t> consts;       ///< compile-time integer constants
  std::map<std::string, std::string> defines;   ///< object-like #defines (ReadProgram fills it)
  std::vector<Control> controls;
  std::vector<ParserDecl> parsers;
  const Control* FindControl(const std::string& n) const;
  const ParserDecl* FindParser(const std::string& n) const;

  /// Width of a scalar type after typedefs and enums (bool 1); throws for a
  /// header/struct or an unknown name. TNA's PortId_t (9), MulticastGroupId_t (16) etc. are built in.
  int WidthOf(const TypeRef& t) const;
  bool IsSigned(const TypeRef& t) const;
  /// The header/struct a type names after typedefs, or nullptr for a scalar.
  const Composite* CompositeOf(const TypeRef& t) const;
};

/// Parses preprocessed tokens.
Program Parse(const std::vector<Token>& tokens);
/// Preprocess + Parse of a file under root, then P4_16's width rules
/// (p4types.h): a source that breaks one throws InvalidP4.
Program ReadProgram(const std::string& root, const std::string& path, const DefineOverrides& overrides = {});

}  // namespace inasim::p4tools::p4src
