#include "p4model/tools/p4reader.h"
#include "common/bounded_file.h"
#include "p4model/tools/p4types.h"

#include <cctype>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace inasim::p4tools::p4src {
namespace {

// ---------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------

// Longest first: the lexer takes the first that matches. `>>` is not here on
// purpose: `bit<16>>(` closes two type argument lists, so the expression
// parser reads a shift as two adjacent `>`.
const char* const kPuncts[] = {"&&&", "|+|", "|-|", "##", "&&", "||", "==", "!=", "<=", ">=", "<<", "++", "..",
                               "{", "}", "(", ")", "[", "]", "<", ">", ";", ",", ".", ":", "=", "+", "-", "*",
                               "/", "%", "&", "|", "^", "~", "!", "?", "@", "#"};

/// Replaces comments by spaces, keeping newlines so line numbers stay right.
std::string StripComments(const std::string& s) {
  std::string out = s;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '"') {
      for (++i; i < out.size() && out[i] != '"' && out[i] != '\n'; ++i)
        if (out[i] == '\\') ++i;
    } else if (out.compare(i, 2, "//") == 0) {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out.compare(i, 2, "/*") == 0) {
      size_t j = i;
      for (; j < out.size() && out.compare(j, 2, "*/") != 0; ++j)
        if (out[j] != '\n') out[j] = ' ';
      if (j < out.size()) out[j] = out[j + 1] = ' ';
      i = j + 1;
    }
  }
  return out;
}

std::vector<Token> Lex(const std::string& text, const std::string& file, int line) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') { ++line; ++i; continue; }
    if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
    Token t;
    t.loc = {file, line};
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      t.kind = Token::Kind::kIdent;
      t.text = text.substr(i, j - i);
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      // 16w0x0800, 8w0b0010, 0xffff, 15w1, 8s3
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      t.kind = Token::Kind::kNumber;
      t.text = text.substr(i, j - i);
      i = j;
    } else if (c == '"') {
      size_t j = i + 1;
      while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      t.kind = Token::Kind::kString;
      t.text = text.substr(i + 1, j - i - 1);
      i = j + 1;
    } else {
      t.kind = Token::Kind::kPunct;
      for (const char* p : kPuncts)
        if (text.compare(i, std::char_traits<char>::length(p), p) == 0) { t.text = p; break; }
      if (t.text.empty()) throw ReadError(t.loc.str() + ": unexpected character '" + std::string(1, c) + "'");
      i += t.text.size();
    }
    out.push_back(std::move(t));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Preprocessor
// ---------------------------------------------------------------------------

struct Macro {
  bool function_like = false;
  std::vector<std::string> params;
  std::vector<Token> body;
};

class Preprocessor {
 public:
  explicit Preprocessor(std::string root, DefineOverrides overrides = {})
      : root_(std::move(root)), overrides_(std::move(overrides)) {}

  void File(const std::string& path, const Loc* from) {
    // An unguarded file that includes itself would recurse without end.
    if (depth_ >= kMaxIncludeDepth)
      throw ReadError((from ? from->str() + ": " : std::string()) + "#include nested more than " +
                      std::to_string(kMaxIncludeDepth) + " deep (an include cycle?)");
    std::string text;
    try {
      text = util::ReadBoundedFile(root_ + "/" + path, util::kMaxSourceFileBytes, "P4 source file");
    } catch (const util::FileReadError& e) {
      throw ReadError((from ? from->str() + ": " : std::string()) + e.what());
    }
    ++depth_;
    Text(text, path);
    --depth_;
  }

  void Text(const std::string& raw, const std::string& path) {
    const std::string text = StripComments(raw);
    const std::string dir = path.find('/') == std::string::npos ? "" : path.substr(0, path.rfind('/') + 1);
    std::vector<Token> pending;  // plain lines since the last directive, expanded as one run
    std::vector<bool> active{true};
    auto flush = [&] {
      Expand(pending, out_, {});
      pending.clear();
    };
    int line = 1;
    size_t pos = 0;
    while (pos <= text.size()) {
      // One logical line (backslash-newline joins), keeping the physical line count.
      std::string logical;
      const int first_line = line;
      size_t end = pos;
      for (;;) {
        end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string part = text.substr(pos, end - pos);
        pos = end + 1;
        ++line;
        size_t last = part.find_last_not_of(" \t\r");
        if (last != std::string::npos && part[last] == '\\') {
          logical += part.substr(0, last) + " ";
          if (pos > text.size()) break;
          continue;
        }
        logical += part;
        break;
      }
      const size_t first = logical.find_first_not_of(" \t\r");
      const Loc loc{path, first_line};
      if (first != std::string::npos && logical[first] == '#') {
        std::vector<Token> d = Lex(logical.substr(first + 1), path, first_line);
        const std::string name = d.empty() ? "" : d[0].text;
        const bool on = active.back();
        if (name == "ifdef" || name == "ifndef") {
          if (d.size() < 2) throw ReadError(loc.str() + ": #" + name + " without a name");
          const bool defined = macros_.count(d[1].text) > 0;
          active.push_back(on && (name == "ifdef" ? defined : !defined));
        } else if (name == "if") {
          active.push_back(on && IfCondition(d, loc));
        } else if (name == "else") {
          if (active.size() < 2) throw ReadError(loc.str() + ": #else without #if");
          const bool was = active.back();
          active.pop_back();
          active.push_back(active.back() && !was);
        } else if (name == "endif") {
          if (active.size() < 2) throw ReadError(loc.str() + ": #endif without #if");
          active.pop_back();
        } else if (!on) {
          // skipped region
        } else if (name == "define") {
          flush();
          Define(logical.substr(first + 1), loc);
        } else if (name == "undef") {
          flush();
          if (d.size() >= 2) macros_.erase(d[1].text);
        } else if (name == "include") {
          flush();
          Include(logical.substr(first + 1), dir, loc);
        } else if (name == "error") {
          throw ReadError(loc.str() + ": #error" + logical.substr(first + 6));
        } else if (!name.empty() && name != "pragma" && name != "line") {
          throw ReadError(loc.str() + ": unsupported directive #" + name);
        }
      } else if (active.back()) {
        std::vector<Token> t = Lex(logical, path, first_line);
        pending.insert(pending.end(), t.begin(), t.end());
      }
      if (pos > text.size()) break;
    }
    if (active.size() != 1) throw ReadError(path + ": #if/#ifdef without #endif");
    flush();
  }

  std::vector<Token> Take() { return std::move(out_); }
  std::map<std::string, std::string> ObjectMacros() const {
    std::map<std::string, std::string> out;
    for (const auto& [name, m] : macros_) {
      if (m.function_like) continue;
      std::string body;
      for (const Token& t : m.body) body += (body.empty() ? "" : " ") + t.text;
      out[name] = body;
    }
    return out;
  }

 private:
  bool IfCondition(const std::vector<Token>& d, const Loc& loc) {
    // #if 0 / 1 / defined(X) / !defined(X): all the subset needs.
    size_t i = 1;
    bool negate = false;
    if (i < d.size() && d[i].text == "!") { negate = true; ++i; }
    bool value = false;
    if (i < d.size() && d[i].kind == Token::Kind::kNumber) {
      value = std::stoll(d[i].text, nullptr, 0) != 0;
    } else if (i < d.size() && d[i].text == "defined") {
      ++i;
      if (i < d.size() && d[i].text == "(") ++i;
      if (i >= d.size()) throw ReadError(loc.str() + ": #if defined without a name");
      value = macros_.count(d[i].text) > 0;
    } else {
      throw ReadError(loc.str() + ": unsupported #if condition");
    }
    return negate ? !value : value;
  }

  void Define(const std::string& line, const Loc& loc) {
    // "define NAME body" or "define NAME(a, b) body": a '(' right after the name.
    size_t i = line.find("define") + 6;
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t j = i;
    while (j < line.size() && (std::isalnum(static_cast<unsigned char>(line[j])) || line[j] == '_')) ++j;
    if (j == i) throw ReadError(loc.str() + ": #define without a name");
    const std::string name = line.substr(i, j - i);
    Macro m;
    if (j < line.size() && line[j] == '(') {
      m.function_like = true;
      const size_t close = line.find(')', j);
      if (close == std::string::npos) throw ReadError(loc.str() + ": #define " + name + ": missing ')'");
      for (const Token& t : Lex(line.substr(j + 1, close - j - 1), loc.file, loc.line))
        if (t.kind == Token::Kind::kIdent) m.params.push_back(t.text);
      j = close + 1;
    }
    m.body = Lex(line.substr(j), loc.file, loc.line);
    // A variant of the program (as if recompiled): the override's body, or
    // no definition at all.
    if (auto o = overrides_.find(name); o != overrides_.end() && !m.function_like) {
      if (!o->second) return;
      m.body = Lex(*o->second, loc.file, loc.line);
    }
    macros_[name] = std::move(m);
  }

  void Include(const std::string& line, const std::string& dir, const Loc& loc) {
    const size_t q = line.find_first_of("\"<");
    if (q == std::string::npos) throw ReadError(loc.str() + ": #include without a file name");
    const char close = line[q] == '"' ? '"' : '>';
    const size_t e = line.find(close, q + 1);
    if (e == std::string::npos) throw ReadError(loc.str() + ": #include: unterminated file name");
    const std::string file = line.substr(q + 1, e - q - 1);
    if (close == '>') return;  // the architecture's own headers: their externs are built into the reader
    const std::string path = dir + file;
    // A file included twice is read twice; the upstream files' #ifndef guards skip the second copy.
    File(path, &loc);
  }

  /// Expands macros in `in`, appending to `out`. `hidden`: macros being expanded.
  void Expand(const std::vector<Token>& in, std::vector<Token>& out, const std::set<std::string>& hidden) {
    for (size_t i = 0; i < in.size(); ++i) {
      const Token& t = in[i];
      auto it = t.kind == Token::Kind::kIdent && !hidden.count(t.text) ? macros_.find(t.text) : macros_.end();
      if (it == macros_.end()) {
        out.push_back(t);
        continue;
      }
      const Macro& m = it->second;
      std::vector<Token> replaced;
      if (!m.function_like) {
        replaced = m.body;
      } else {
        if (i + 1 >= in.size() || in[i + 1].text != "(") {
          out.push_back(t);
          continue;
        }
        std::vector<std::vector<Token>> args(1);
        int depth = 0;
        size_t j = i + 2;
        for (; j < in.size(); ++j) {
          const std::string& x = in[j].text;
          if (in[j].kind == Token::Kind::kPunct && (x == "(" || x == "[" || x == "{")) ++depth;
          if (in[j].kind == Token::Kind::kPunct && (x == ")" || x == "]" || x == "}")) {
            if (depth == 0) break;
            --depth;
          }
          if (depth == 0 && x == "," && in[j].kind == Token::Kind::kPunct) {
            args.emplace_back();
            continue;
          }
          args.back().push_back(in[j]);
        }
        if (j >= in.size()) throw ReadError(t.loc.str() + ": macro " + t.text + ": missing ')'");
        if (m.params.empty() && args.size() == 1 && args[0].empty()) args.clear();
        if (args.size() != m.params.size())
          throw ReadError(t.loc.str() + ": macro " + t.text + " takes " + std::to_string(m.params.size()) +
                          " arguments, got " + std::to_string(args.size()));
        for (size_t k = 0; k < m.body.size(); ++k) {
          const Token& b = m.body[k];
          size_t p = 0;
          while (p < m.params.size() && !(b.kind == Token::Kind::kIdent && m.params[p] == b.text)) ++p;
          if (p == m.params.size()) {
            replaced.push_back(b);
            continue;
          }
          const bool pasted = (k > 0 && m.body[k - 1].text == "##") || (k + 1 < m.body.size() && m.body[k + 1].text == "##");
          if (pasted) {
            replaced.insert(replaced.end(), args[p].begin(), args[p].end());
          } else {
            std::vector<Token> expanded;
            Expand(args[p], expanded, hidden);
            replaced.insert(replaced.end(), expanded.begin(), expanded.end());
          }
        }
        i = j;  // the ')'
      }
      // Token pasting: `a ## b` joins two identifier/number tokens; `##` next to
      // punctuation (as in `value##i##;`) just disappears.
      std::vector<Token> pasted;
      for (size_t k = 0; k < replaced.size(); ++k) {
        if (replaced[k].text == "##" && replaced[k].kind == Token::Kind::kPunct) {
          size_t n = k + 1;
          while (n < replaced.size() && replaced[n].text == "##") ++n;
          if (!pasted.empty() && n < replaced.size() && pasted.back().kind != Token::Kind::kPunct &&
              replaced[n].kind != Token::Kind::kPunct) {
            pasted.back().text += replaced[n].text;
            k = n;
          } else {
            k = n - 1;
          }
          continue;
        }
        Token r = replaced[k];
        r.loc = t.loc;  // report expansions at the use site
        pasted.push_back(r);
      }
      std::set<std::string> inner = hidden;
      inner.insert(t.text);
      Expand(pasted, out, inner);
    }
  }

  static constexpr int kMaxIncludeDepth = 64;
  std::string root_;
  int depth_ = 0;
  std::map<std::string, Macro> macros_;
  DefineOverrides overrides_;
  std::vector<Token> out_;
};

// ---------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : t_(tokens) {
    Token end;
    end.kind = Token::Kind::kEnd;
    end.loc = t_.empty() ? Loc{"<input>", 0} : t_.back().loc;
    t_.push_back(end);
  }

  Program Run() {
    while (!AtEnd()) TopLevel();
    return std::move(p_);
  }

 private:
  // --- token helpers ---
  const Token& Peek(size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  bool AtEnd() const { return Peek().kind == Token::Kind::kEnd; }
  bool Is(const std::string& s, size_t k = 0) const {
    const Token& t = Peek(k);
    return t.kind != Token::Kind::kEnd && t.kind != Token::Kind::kString && t.text == s;
  }
  bool Accept(const std::string& s) {
    if (!Is(s)) return false;
    ++i_;
    return true;
  }
  [[noreturn]] void Fail(const std::string& what) const {
    const Token& t = Peek();
    throw ReadError(t.loc.str() + ": expected " + what + ", found " +
                    (t.kind == Token::Kind::kEnd ? std::string("end of input") : "'" + t.text + "'"));
  }
  void Expect(const std::string& s) {
    if (!Accept(s)) Fail("'" + s + "'");
  }
  std::string Ident() {
    if (Peek().kind != Token::Kind::kIdent) Fail("a name");
    return t_[i_++].text;
  }
  /// Skips a balanced (...) / {...} / [...] group starting at the current token.
  void SkipGroup() {
    int depth = 0;
    do {
      if (AtEnd()) Fail("a closing bracket");
      const std::string& x = Peek().text;
      if (Peek().kind == Token::Kind::kPunct) {
        if (x == "(" || x == "{" || x == "[") ++depth;
        if (x == ")" || x == "}" || x == "]") --depth;
      }
      ++i_;
    } while (depth > 0);
  }
  /// Skips to the `;` ending this declaration/statement (over balanced groups), or past a `{...}` block.
  void SkipStatement() {
    while (!AtEnd()) {
      if (Is(";")) { ++i_; return; }
      if (Is("{")) {
        SkipGroup();
        if (Is(";")) ++i_;
        return;
      }
      if (Is("(") || Is("[")) { SkipGroup(); continue; }
      ++i_;
    }
  }
  void SkipAnnotations() {
    while (Is("@")) {
      ++i_;
      Ident();
      if (Is("(")) SkipGroup();
    }
  }

  // --- types ---
  TypeRef Type() {
    TypeRef t;
    if (Is("bit") || Is("int") || Is("varbit")) {
      const std::string k = Ident();
      t.kind = k == "int" ? TypeRef::Kind::kInt : TypeRef::Kind::kBit;
      if (k == "int" && !Is("<")) return t;  // `const int x`: arbitrary precision (width 0)
      Expect("<");
      t.width = static_cast<int>(ConstValue(ExprUntilAngle()));
      Expect(">");
      return t;
    }
    if (Accept("bool")) {
      t.kind = TypeRef::Kind::kBool;
      t.width = 1;
      return t;
    }
    t.kind = TypeRef::Kind::kNamed;
    t.name = Ident();
    if (Is("<")) SkipAngles();  // generic extern types in parameter lists
    return t;
  }
  void SkipAngles() {
    int depth = 0;
    do {
      if (Is("<")) ++depth;
      if (Is(">")) --depth;
      ++i_;
    } while (depth > 0 && !AtEnd());
  }
  /// A type argument's expression: a literal, a name, or a parenthesized expression.
  ExprPtr ExprUntilAngle() {
    if (Is("(")) {
      ++i_;
      ExprPtr e = Expression();
      Expect(")");
      return e;
    }
    return Primary();
  }

  // --- expressions (precedence climbing) ---
  ExprPtr Make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }

  ExprPtr Expression() { return Ternary(); }
  ExprPtr Ternary() {
    ExprPtr c = Binary(0);
    if (!Accept("?")) return c;
    Expr e;
    e.kind = Expr::Kind::kTernary;
    e.loc = c->loc;
    ExprPtr a = Expression();
    Expect(":");
    ExprPtr b = Expression();
    e.args = {c, a, b};
    return Make(e);
  }
  /// Binary operator at the cursor with its precedence (higher binds tighter), or -1.
  int BinaryOp(std::string& op) const {
    static const std::map<std::string, int> prec = {
        {"||", 1}, {"&&", 2}, {"|", 3}, {"^", 4}, {"&", 5}, {"==", 6}, {"!=", 6}, {"<", 7}, {"<=", 7}, {">", 7},
        {">=", 7}, {"<<", 8}, {"++", 9}, {"+", 10}, {"-", 10}, {"|+|", 10}, {"|-|", 10}, {"*", 11}, {"/", 11},
        {"%", 11}};
    if (Peek().kind != Token::Kind::kPunct) return -1;
    op = Peek().text;
    if (op == ">" && Is(">", 1) && Peek(1).loc.line == Peek().loc.line) {
      op = ">>";
      return 8;
    }
    auto it = prec.find(op);
    return it == prec.end() ? -1 : it->second;
  }
  ExprPtr Binary(int min_prec) {
    ExprPtr lhs = Unary();
    for (;;) {
      std::string op;
      const int p = BinaryOp(op);
      if (p < 0 || p < min_prec) return lhs;
      i_ += op == ">>" ? 2 : 1;
      ExprPtr rhs = Binary(p + 1);
      Expr e;
      e.kind = Expr::Kind::kBinary;
      e.op = op;
      e.loc = lhs->loc;
      e.args = {lhs, rhs};
      lhs = Make(e);
    }
  }
  ExprPtr Unary() {
    if (Is("+")) {  // unary plus: the operand (SwitchML's `a +++ b` is `a ++ +b`)
      ++i_;
      return Unary();
    }
    if (Is("~") || Is("!") || Is("-")) {
      Expr e;
      e.kind = Expr::Kind::kUnary;
      e.loc = Peek().loc;
      e.op = t_[i_++].text;
      e.args = {Unary()};
      return Make(e);
    }
    // Cast: (bit<N>) x, (int<N>) x, (bool) x, (typedef_t) x.
    if (Is("(") && (Is("bit", 1) || Is("int", 1) || Is("bool", 1) ||
                    (Peek(1).kind == Token::Kind::kIdent && p_.typedefs.count(Peek(1).text) && Is(")", 2)))) {
      Expr e;
      e.kind = Expr::Kind::kCast;
      e.loc = Peek().loc;
      ++i_;
      e.type = Type();
      Expect(")");
      e.args = {Unary()};
      return Make(e);
    }
    return Postfix(Primary());
  }
  ExprPtr Postfix(ExprPtr base) {
    for (;;) {
      if (Is("[")) {
        ++i_;
        Expr e;
        e.kind = Expr::Kind::kSlice;
        e.loc = base->loc;
        e.hi = static_cast<int>(ConstValue(Expression()));
        Expect(":");
        e.lo = static_cast<int>(ConstValue(Expression()));
        Expect("]");
        e.args = {base};
        base = Make(e);
      } else if (Is("(") && base->kind == Expr::Kind::kName) {
        Expr e;
        e.kind = Expr::Kind::kCall;
        e.op = base->name;
        e.type = base->type;
        e.loc = base->loc;
        ++i_;
        if (!Is(")")) {
          do e.args.push_back(Expression());
          while (Accept(","));
        }
        Expect(")");
        base = Make(e);
      } else if (Is(".") && base->kind == Expr::Kind::kCall) {
        ++i_;  // `x.execute(i).field` is not in the subset: keep the name for messages
        Expr e;
        e.kind = Expr::Kind::kName;
        e.loc = base->loc;
        e.name = base->op + "()." + Ident();
        base = Make(e);
      } else {
        return base;
      }
    }
  }
  ExprPtr Primary() {
    const Token& t = Peek();
    if (Is("{")) {  // a list expression: `{a, b, ...}`
      Expr e;
      e.kind = Expr::Kind::kList;
      e.loc = t.loc;
      ++i_;
      if (!Is("}")) {
        do e.args.push_back(Expression());
        while (Accept(","));
      }
      Expect("}");
      return Make(e);
    }
    if (Accept("(")) {
      ExprPtr e = Expression();
      Expect(")");
      return e;
    }
    if (t.kind == Token::Kind::kNumber) {
      ++i_;
      return Make(Number(t));
    }
    if (t.kind == Token::Kind::kIdent) {
      Expr e;
      e.loc = t.loc;
      if (t.text == "true" || t.text == "false") {
        ++i_;
        e.kind = Expr::Kind::kLiteral;
        e.value = t.text == "true";
        e.width = 1;
        e.is_bool = true;
        return Make(e);
      }
      e.kind = Expr::Kind::kName;
      e.name = Ident();
      while (Is(".") && Peek(1).kind == Token::Kind::kIdent) {
        ++i_;
        e.name += "." + Ident();
      }
      // A generic call `f<T>(...)` (TNA's port_metadata_unpack): T is kept
      // for the call Postfix builds.
      if (Is("<") && Peek(1).kind == Token::Kind::kIdent && Is(">", 2) && Is("(", 3)) {
        ++i_;
        e.type.name = Ident();
        ++i_;
      }
      return Make(e);
    }
    Fail("an expression");
  }
  Expr Number(const Token& t) const {
    Expr e;
    e.kind = Expr::Kind::kLiteral;
    e.loc = t.loc;
    std::string s = t.text;
    const size_t w = s.find_first_of("ws");
    if (w != std::string::npos && w > 0 && std::isdigit(static_cast<unsigned char>(s[0])) &&
        !(s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'b' || s[1] == 'B') && w > 1)) {
      e.width = std::stoi(s.substr(0, w));
      e.is_signed = s[w] == 's';
      s = s.substr(w + 1);
    }
    std::string digits;
    for (char c : s)
      if (c != '_') digits += c;
    try {
      if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'b' || digits[1] == 'B')) {
        e.value = std::stoull(digits.substr(2), nullptr, 2);
      } else if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'o' || digits[1] == 'O')) {
        e.value = std::stoull(digits.substr(2), nullptr, 8);
      } else if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'd' || digits[1] == 'D')) {
        e.value = std::stoull(digits.substr(2), nullptr, 10);
      } else if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        e.value = std::stoull(digits.substr(2), nullptr, 16);
      } else {
        e.value = std::stoull(digits, nullptr, 10);
      }
    } catch (const std::exception&) {
      throw ReadError(t.loc.str() + ": bad number '" + t.text + "'");
    }
    if (e.width > 0 && e.width < 64) e.value &= (uint64_t{1} << e.width) - 1;
    return e;
  }

  /// Compile-time value of an expression over literals, consts and enum members.
  uint64_t ConstValue(const ExprPtr& e) const {
    switch (e->kind) {
      case Expr::Kind::kLiteral: return e->value;
      case Expr::Kind::kName: {
        auto c = p_.consts.find(e->name);
        if (c != p_.consts.end()) return c->second;
        const size_t dot = e->name.rfind('.');
        if (dot != std::string::npos) {
          auto en = p_.enums.find(e->name.substr(0, dot));
          if (en != p_.enums.end())
            for (const auto& m : en->second.members)
              if (m.first == e->name.substr(dot + 1)) return m.second;
        }
        throw ReadError(e->loc.str() + ": '" + e->name + "' is not a compile-time constant");
      }
      case Expr::Kind::kUnary: {
        const uint64_t a = ConstValue(e->args[0]);
        return e->op == "~" ? ~a : e->op == "-" ? uint64_t{0} - a : uint64_t{a == 0};
      }
      case Expr::Kind::kCast: {
        const uint64_t a = ConstValue(e->args[0]);
        const int w = e->type.kind == TypeRef::Kind::kNamed ? p_.WidthOf(e->type) : e->type.width;
        return w >= 64 ? a : a & ((uint64_t{1} << w) - 1);
      }
      case Expr::Kind::kBinary: {
        const uint64_t a = ConstValue(e->args[0]), b = ConstValue(e->args[1]);
        const std::string& op = e->op;
        if (op == "+") return a + b;
        if (op == "-") return a - b;
        if (op == "*") return a * b;
        if (op == "/" || op == "%") {
          if (b == 0) throw ReadError(e->loc.str() + ": division by zero");
          return op == "/" ? a / b : a % b;
        }
        if (op == "<<") return b >= 64 ? 0 : a << b;
        if (op == ">>") return b >= 64 ? 0 : a >> b;
        if (op == "&") return a & b;
        if (op == "|") return a | b;
        if (op == "^") return a ^ b;
        throw ReadError(e->loc.str() + ": operator " + op + " in a constant expression");
      }
      default: throw ReadError(e->loc.str() + ": not a compile-time constant");
    }
  }

  // --- statements (RegisterAction bodies) ---
  bool AtDeclaration() const {
    if (Is("bit") || Is("int") || Is("bool")) return true;
    return Peek().kind == Token::Kind::kIdent && Peek(1).kind == Token::Kind::kIdent && p_.typedefs.count(Peek().text);
  }
  std::vector<StmtPtr> Block() {
    Expect("{");
    std::vector<StmtPtr> out;
    while (!Accept("}")) {
      if (AtEnd()) Fail("'}'");
      out.push_back(Statement());
    }
    return out;
  }
  StmtPtr Statement() {
    Stmt s;
    s.loc = Peek().loc;
    if (Is("{")) {
      s.kind = Stmt::Kind::kBlock;
      s.then_body = Block();
    } else if (Accept(";")) {
      s.kind = Stmt::Kind::kBlock;  // the empty statement
    } else if (Accept("if")) {
      s.kind = Stmt::Kind::kIf;
      Expect("(");
      s.cond = Expression();
      Expect(")");
      s.then_body = Is("{") ? Block() : std::vector<StmtPtr>{Statement()};
      if (Accept("else")) s.else_body = Is("{") ? Block() : std::vector<StmtPtr>{Statement()};
    } else if (Accept("exit")) {
      s.kind = Stmt::Kind::kExit;
      Expect(";");
    } else if (Accept("return")) {
      s.kind = Stmt::Kind::kReturn;
      Expect(";");
    } else if (AtDeclaration()) {
      s.kind = Stmt::Kind::kDecl;
      s.type = Type();
      s.name = Ident();
      if (Accept("=")) s.rhs = Expression();
      Expect(";");
    } else {
      s.kind = Stmt::Kind::kAssign;
      s.lhs = Postfix(Primary());
      if (s.lhs->kind == Expr::Kind::kCall && Accept(";")) {
        s.kind = Stmt::Kind::kCall;
        s.rhs = s.lhs;
        s.lhs = nullptr;
        return std::make_shared<const Stmt>(std::move(s));
      }
      if (s.lhs->kind != Expr::Kind::kName && s.lhs->kind != Expr::Kind::kSlice) Fail("an assignment");
      Expect("=");
      s.rhs = Expression();
      Expect(";");
    }
    return std::make_shared<const Stmt>(std::move(s));
  }

  /// A `{...}` body as statements; a body outside the subset is skipped (false).
  bool TryBlock(std::vector<StmtPtr>& out) {
    const size_t start = i_;
    try {
      out = Block();
      return true;
    } catch (const ReadError&) {
      i_ = start;
      out.clear();
      SkipGroup();
      return false;
    }
  }

  /// After `bit<...>` / `int<...>` / `bool` at the cursor: is it `type name ;` or `type name = ...`?
  bool LocalAfterType() const {
    size_t k = 0;
    if (Is("bool")) {
      k = 1;
    } else {
      int depth = 0;
      do {
        if (Is("<", k)) ++depth;
        if (Is(">", k)) --depth;
        ++k;
      } while ((depth > 0 || k < 2) && Peek(k).kind != Token::Kind::kEnd);
    }
    return Peek(k).kind == Token::Kind::kIdent && (Is(";", k + 1) || Is("=", k + 1));
  }

  // --- declarations ---
  std::vector<Param> Params() {
    std::vector<Param> out;
    Expect("(");
    while (!Accept(")")) {
      SkipAnnotations();
      Param p;
      if (Is("in") || Is("out") || Is("inout")) p.direction = Ident();
      p.type = Type();
      p.name = Ident();
      if (Accept("=")) Expression();  // default values
      out.push_back(p);
      if (!Is(")")) Expect(",");
    }
    return out;
  }

  void TopLevel() {
    SkipAnnotations();
    const Loc loc = Peek().loc;
    if (Accept(";")) return;
    if (Accept("typedef")) {
      TypeRef t = Type();
      p_.typedefs[Ident()] = t;
      Expect(";");
    } else if (Accept("const")) {
      TypeRef t = Type();
      const std::string name = Ident();
      Expect("=");
      uint64_t v = ConstValue(Expression());
      if (t.kind != TypeRef::Kind::kNamed && t.width > 0 && t.width < 64) v &= (uint64_t{1} << t.width) - 1;
      p_.consts[name] = v;
      Expect(";");
    } else if (Accept("enum")) {
      Enum e;
      e.loc = loc;
      if (Is("bit") || Is("int")) e.underlying = Type();
      e.name = Ident();
      Expect("{");
      uint64_t next = 0;
      while (!Accept("}")) {
        const std::string m = Ident();
        if (Accept("=")) next = ConstValue(Expression());
        e.members.emplace_back(m, next++);
        if (!Is("}")) Expect(",");
      }
      p_.enums[e.name] = e;
    } else if (Is("header") || Is("struct") || Is("header_union")) {
      Composite c;
      c.is_header = Ident() != "struct";
      c.loc = loc;
      c.name = Ident();
      Expect("{");
      while (!Accept("}")) {
        SkipAnnotations();
        Field f;
        f.loc = Peek().loc;
        f.type = Type();
        f.name = Ident();
        Expect(";");
        c.fields.push_back(f);
      }
      p_.composites[c.name] = c;
    } else if (Is("control")) {
      ++i_;
      ControlDecl(loc);
    } else if (Is("parser") && Peek(1).kind == Token::Kind::kIdent) {
      ++i_;
      ParserDeclaration(loc);
    } else {
      // parser, package instantiation (Pipeline(...) pipe;), extern declarations, ...
      SkipStatement();
    }
  }

  void ControlDecl(const Loc& loc) {
    Control c;
    c.loc = loc;
    c.name = Ident();
    if (Is("<")) SkipAngles();
    c.params = Params();
    if (Accept(";")) return;  // a control type declaration
    Expect("{");
    while (!Accept("}")) {
      if (AtEnd()) Fail("'}' closing control " + c.name);
      SkipAnnotations();
      const Loc mloc = Peek().loc;
      if (Is("Register") && Is("<", 1)) {
        RegisterDecl r;
        r.loc = mloc;
        ++i_;
        Expect("<");
        r.element = Type();
        Expect(",");
        r.index = Type();
        Expect(">");
        Expect("(");
        r.size = ConstValue(Expression());
        while (Accept(",")) Expression();  // initial value
        Expect(")");
        r.name = Ident();
        Expect(";");
        c.registers.push_back(r);
      } else if ((Is("RegisterAction") || Is("DirectRegisterAction")) && Is("<", 1)) {
        c.register_actions.push_back(RegisterActionDeclaration(mloc));
      } else if (Is("action")) {
        ++i_;
        ActionDecl a;
        a.loc = mloc;
        a.name = Ident();
        a.params = Params();
        a.body_read = TryBlock(a.body);
        c.actions.push_back(a);
      } else if (Is("table")) {
        ++i_;
        c.tables.push_back(Table(mloc));
      } else if (Is("apply") && Is("{", 1)) {
        ++i_;
        c.apply_read = TryBlock(c.apply);
      } else if (AtDeclaration() && Peek(1).kind == Token::Kind::kIdent ? (Is(";", 2) || Is("=", 2))
                                                                        : (AtDeclaration() && LocalAfterType())) {
        Field f;
        f.loc = mloc;
        f.type = Type();
        f.name = Ident();
        SkipStatement();
        c.locals.push_back(f);
      } else if (auto inst = TryInstance(mloc)) {
        c.instances.push_back(*inst);
      } else {
        SkipStatement();  // anything else a control may declare (none in the programs read)
      }
    }
    p_.controls.push_back(std::move(c));
  }

  /// `RegisterAction<T, I, R>(reg) name = { void apply(...) {...} };` or
  /// `DirectRegisterAction<T, R>(direct_reg) name = {...};` (no index: its
  /// cell is the running table entry's).
  RegisterActionDecl RegisterActionDeclaration(const Loc& loc) {
    RegisterActionDecl a;
    a.loc = loc;
    a.direct = Is("DirectRegisterAction");
    const std::string kind = t_[i_++].text;
    Expect("<");
    a.element = Type();
    Expect(",");
    if (!a.direct) {
      a.index = Type();
      Expect(",");
    }
    a.result = Type();
    Expect(">");
    Expect("(");
    a.register_name = Ident();
    Expect(")");
    a.name = Ident();
    Expect("=");
    Expect("{");
    Expect("void");
    if (Ident() != "apply") Fail("apply");
    std::vector<Param> ps = Params();
    if (ps.empty() || ps.size() > 2) throw ReadError(loc.str() + ": " + kind + " " + a.name + ": apply needs 1 or 2 parameters");
    a.value_param = ps[0].name;
    if (ps.size() == 2) a.result_param = ps[1].name;
    a.body = Block();
    Expect("}");
    Expect(";");
    return a;
  }

  /// `Type[<...>](args) name;`: an instance of a control or an extern, with
  /// its type arguments and constructor arguments when they are in the
  /// subset. Leaves the position unchanged when the declaration has another
  /// shape.
  std::optional<Instance> TryInstance(const Loc& loc) {
    if (Peek().kind != Token::Kind::kIdent) return std::nullopt;
    const size_t start = i_;
    Instance inst;
    inst.loc = loc;
    inst.type = Ident();
    if (Is("<")) {
      const size_t angles_at = i_;
      try {
        ++i_;
        do inst.type_args.push_back(Type());
        while (Accept(","));
        Expect(">");
      } catch (const ReadError&) {  // e.g. `Hash<bit<16>>`, read as `>>`: not kept
        inst.type_args.clear();
        i_ = angles_at;
        SkipAngles();
      }
    }
    if (Is("(")) {
      const size_t args_at = i_;
      try {
        ++i_;
        if (!Is(")")) {
          do inst.args.push_back(Expression());
          while (Accept(","));
        }
        Expect(")");
      } catch (const ReadError&) {  // arguments outside the expression subset: not kept
        inst.args.clear();
        i_ = args_at;
        SkipGroup();
      }
      if (Peek().kind == Token::Kind::kIdent && Is(";", 1)) {
        inst.name = Ident();
        Expect(";");
        return inst;
      }
    }
    i_ = start;
    return std::nullopt;
  }

  void ParserDeclaration(const Loc& loc) {
    ParserDecl pd;
    pd.loc = loc;
    pd.name = Ident();
    if (Is("<")) SkipAngles();
    pd.params = Params();
    if (Accept(";")) return;  // a parser type declaration
    Expect("{");
    pd.read = true;
    while (!Accept("}")) {
      if (AtEnd()) Fail("'}' closing parser " + pd.name);
      SkipAnnotations();
      const Loc sloc = Peek().loc;
      if (Accept("state")) {
        ParserState st;
        st.loc = sloc;
        st.name = Ident();
        const size_t start = i_;
        try {
          StateBody(st);
          pd.states.push_back(std::move(st));
        } catch (const ReadError&) {
          i_ = start;
          SkipGroup();
          pd.read = false;
        }
      } else if (AtDeclaration() && LocalAfterType()) {
        Field f;
        f.loc = sloc;
        f.type = Type();
        f.name = Ident();
        SkipStatement();
        pd.locals.push_back(f);
      } else if (auto inst = TryInstance(sloc)) {
        pd.instances.push_back(*inst);  // Checksum, ParserCounter, ...
      } else {
        SkipStatement();  // value_set, ...
      }
    }
    p_.parsers.push_back(std::move(pd));
  }

  /// `{ statements transition ...; }`; no transition is `transition reject` (P4_16 §12.5).
  void StateBody(ParserState& st) {
    Expect("{");
    while (!Is("transition") && !Is("}")) {
      if (AtEnd()) Fail("'}' closing state " + st.name);
      st.body.push_back(Statement());
    }
    st.next = "reject";
    if (Accept("transition")) {
      if (Accept("select")) {
        st.next.clear();
        Expect("(");
        do st.select.push_back(Expression());
        while (Accept(","));
        Expect(")");
        Expect("{");
        while (!Accept("}")) {
          ParserState::Case c;
          c.loc = Peek().loc;
          if (Accept("(")) {
            do c.keys.push_back(KeySet());
            while (Accept(","));
            Expect(")");
          } else {
            c.keys.push_back(KeySet());
          }
          Expect(":");
          c.next = Ident();
          Expect(";");
          st.cases.push_back(std::move(c));
        }
      } else {
        st.next = Ident();
        Expect(";");
      }
    }
    Expect("}");
  }

  /// `name(args)` of an entry or default action; args are constants.
  void ActionRef(std::string& name, std::vector<uint64_t>& args) {
    name = Ident();
    if (Accept("(")) {
      while (!Accept(")")) {
        args.push_back(ConstValue(Expression()));
        if (!Is(")")) Expect(",");
      }
    }
  }

  KeyMatch KeySet() {
    KeyMatch k;
    if (Accept("_") || Accept("default")) {
      k.dont_care = true;
      k.mask = 0;
      return k;
    }
    k.value = ConstValue(Binary(1));  // `&&&` is not an operator of the expression grammar
    if (Accept("&&&")) {
      k.has_mask = true;
      k.mask = ConstValue(Binary(1));
    }
    return k;
  }

  TableDecl Table(const Loc& loc) {
    TableDecl t;
    t.loc = loc;
    t.name = Ident();
    Expect("{");
    while (!Accept("}")) {
      if (AtEnd()) Fail("'}' closing table " + t.name);
      SkipAnnotations();
      if (Accept("key")) {
        Expect("=");
        Expect("{");
        while (!Accept("}")) {
          ExprPtr f = Expression();
          Expect(":");
          const std::string kind = Ident();
          SkipAnnotations();
          Expect(";");
          std::string path = f->kind == Expr::Kind::kName ? f->name : "<expression>";
          if (f->kind == Expr::Kind::kCall && f->args.empty() && f->op.size() > 8 &&
              f->op.compare(f->op.size() - 8, 8, ".isValid") == 0)
            path = f->op + "()";
          if (f->kind == Expr::Kind::kSlice && f->args[0]->kind == Expr::Kind::kName)
            path = f->args[0]->name + "[" + std::to_string(f->hi) + ":" + std::to_string(f->lo) + "]";
          t.keys.emplace_back(path, kind);
        }
      } else if (Accept("actions")) {
        Expect("=");
        Expect("{");
        while (!Accept("}")) {
          SkipAnnotations();
          // P4_16 grammar: actionList entries are `optAnnotations actionRef ";"`.
          if (Peek().kind != Token::Kind::kIdent)
            throw InvalidP4("not valid P4: " + Peek().loc.str() + ": an actions list entry must name an action, found '" +
                            Peek().text + "'");
          t.actions.push_back(Ident());
          if (Is("(")) SkipGroup();
          Expect(";");
        }
      } else if (Is("const") && Is("default_action", 1)) {
        i_ += 2;
        Expect("=");
        ActionRef(t.default_action, t.default_args);
        Expect(";");
      } else if (Accept("default_action")) {
        Expect("=");
        ActionRef(t.default_action, t.default_args);
        Expect(";");
      } else if (Is("const") && Is("entries", 1)) {
        i_ += 2;
        Expect("=");
        Expect("{");
        t.has_const_entries = true;
        while (!Accept("}")) {
          SkipAnnotations();
          ConstEntry e;
          e.loc = Peek().loc;
          if (Accept("(")) {
            do e.keys.push_back(KeySet());
            while (Accept(","));
            Expect(")");
          } else {
            e.keys.push_back(KeySet());
          }
          Expect(":");
          ActionRef(e.action, e.args);
          Expect(";");
          if (e.keys.size() != t.keys.size())
            throw ReadError(e.loc.str() + ": entry of table " + t.name + " has " + std::to_string(e.keys.size()) +
                            " key values, the table has " + std::to_string(t.keys.size()) + " keys");
          t.entries.push_back(e);
        }
      } else {
        SkipStatement();  // size, counters, implementation, idle_timeout, ...
      }
    }
    return t;
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  Program p_;
};

// TNA types the programs use without declaring them (tna.p4 is not available).
const std::map<std::string, int>& TnaTypeWidths() {
  static const std::map<std::string, int> w = {
      {"PortId_t", 9},         {"MulticastGroupId_t", 16}, {"QueueId_t", 5}, {"MirrorId_t", 10},
      {"ReplicationId_t", 16}, {"L1ExclusionId_t", 16},   {"L2ExclusionId_t", 9}, {"CloneId_t", 2}};
  return w;
}

}  // namespace

std::string TypeRef::str() const {
  switch (kind) {
    case Kind::kBit: return "bit<" + std::to_string(width) + ">";
    case Kind::kInt: return "int<" + std::to_string(width) + ">";
    case Kind::kBool: return "bool";
    case Kind::kNamed: return name;
  }
  return name;
}

std::vector<Token> Preprocess(const std::string& root, const std::string& path,
                              std::map<std::string, std::string>* defines, const DefineOverrides& overrides) {
  Preprocessor pp(root, overrides);
  pp.File(path, nullptr);
  if (defines) *defines = pp.ObjectMacros();
  return pp.Take();
}

std::vector<Token> PreprocessText(const std::string& text, const std::string& name, const std::string& root) {
  Preprocessor pp(root);
  pp.Text(text, name);
  return pp.Take();
}

Program Parse(const std::vector<Token>& tokens) { return Parser(tokens).Run(); }

Program ReadProgram(const std::string& root, const std::string& path, const DefineOverrides& overrides) {
  std::map<std::string, std::string> defines;
  Program p = Parse(Preprocess(root, path, &defines, overrides));
  p.defines = std::move(defines);
  RequireValidWidths(p);
  return p;
}

const Instance* Control::FindInstance(const std::string& n) const {
  for (const auto& x : instances)
    if (x.name == n) return &x;
  return nullptr;
}
const RegisterActionDecl* Control::FindRegisterAction(const std::string& n) const {
  for (const auto& a : register_actions)
    if (a.name == n) return &a;
  return nullptr;
}
const TableDecl* Control::FindTable(const std::string& n) const {
  for (const auto& t : tables)
    if (t.name == n) return &t;
  return nullptr;
}
const ActionDecl* Control::FindAction(const std::string& n) const {
  for (const auto& a : actions)
    if (a.name == n) return &a;
  return nullptr;
}

const ParserState* ParserDecl::FindState(const std::string& n) const {
  for (const auto& st : states)
    if (st.name == n) return &st;
  return nullptr;
}

const ParserDecl* Program::FindParser(const std::string& n) const {
  for (const auto& p : parsers)
    if (p.name == n) return &p;
  return nullptr;
}

const Control* Program::FindControl(const std::string& n) const {
  for (const auto& c : controls)
    if (c.name == n) return &c;
  return nullptr;
}

int Program::WidthOf(const TypeRef& t) const {
  TypeRef cur = t;
  for (int hops = 0; hops < 32; ++hops) {
    if (cur.kind != TypeRef::Kind::kNamed) return cur.width;
    auto td = typedefs.find(cur.name);
    if (td != typedefs.end()) {
      cur = td->second;
      continue;
    }
    auto en = enums.find(cur.name);
    if (en != enums.end()) {
      if (en->second.underlying.kind == TypeRef::Kind::kNamed)
        throw ReadError(en->second.loc.str() + ": enum " + cur.name + " has no underlying bit<N> type");
      return en->second.underlying.width;
    }
    auto tna = TnaTypeWidths().find(cur.name);
    if (tna != TnaTypeWidths().end()) return tna->second;
    if (composites.count(cur.name)) throw ReadError("type " + cur.name + " is a header/struct, not a scalar");
    throw ReadError("unknown type " + cur.name);
  }
  throw ReadError("typedef cycle at " + t.name);
}

bool Program::IsSigned(const TypeRef& t) const {
  TypeRef cur = t;
  for (int hops = 0; hops < 32 && cur.kind == TypeRef::Kind::kNamed; ++hops) {
    auto td = typedefs.find(cur.name);
    if (td == typedefs.end()) return false;
    cur = td->second;
  }
  return cur.kind == TypeRef::Kind::kInt;
}

const Composite* Program::CompositeOf(const TypeRef& t) const {
  TypeRef cur = t;
  for (int hops = 0; hops < 32 && cur.kind == TypeRef::Kind::kNamed; ++hops) {
    auto c = composites.find(cur.name);
    if (c != composites.end()) return &c->second;
    auto td = typedefs.find(cur.name);
    if (td == typedefs.end()) return nullptr;
    cur = td->second;
  }
  return nullptr;
}

}  // namespace inasim::p4tools::p4src
