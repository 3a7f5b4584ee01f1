"""No function outside tests is longer than 100 lines (issue 25: "no god
functions"), in C++ (src/, protocols/*/{dataplane,host}, p4model/, bench/)
and in Python (python/, analysis/, bench/, scripts/).

Python functions are measured with the ast. C++ functions with a small
scanner: comments and literals blanked, then every `{` at namespace or class
scope whose header (the text since the last `;`, `{` or `}`) has a `(` opens
a function body, measured from the header's first line to its `}`. That is
what a reader sees as one function: lambdas and local classes count towards
the function around them."""

import ast
import re

from helpers import SOURCE_DIR

LIMIT = 100
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$")


def blank_comments_and_literals(text: str) -> str:
    """The C++ text with comments, strings and chars replaced by spaces
    (newlines kept, so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            delim = text[i + 2:text.find("(", i)]
            j = text.find(")" + delim + '"', i) + len(delim) + 2
        elif c == "'" and 0 < i < n - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            out.append(c)  # a digit separator (65'535), not a character literal
            i += 1
            continue
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(c)
            i += 1
            continue
        out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
        i = j
    return "".join(out)


def cpp_functions(text: str):
    """(first line, last line) of every function body at namespace or class scope."""
    code = blank_comments_and_literals(text)
    stack = []  # per open brace: "scope", "function" or "other", and a function's first line
    header_start = start = 0
    found = []
    for i, c in enumerate(code):
        if c in ";{}":
            if c == "{":
                header = code[header_start:i]
                inside_function = any(kind == "function" for kind, _ in stack)
                if inside_function:
                    kind = "other"
                elif header.lstrip().startswith(",") and found and found[-1][1] == code.count("\n", 0, header_start) + 1:
                    # A constructor's init list went on after a member's braces (x_{x}, y_(2) {):
                    # the same function, from its first line.
                    kind, start = "function", found.pop()[0]
                elif SCOPE.search(header.strip()) or header.strip().startswith(("extern", "template<>")):
                    kind = "scope"
                elif "(" in header and "=" not in header.split("(")[0]:
                    kind = "function"
                    start = code.count("\n", 0, header_start + len(header) - len(header.lstrip())) + 1
                else:
                    kind = "other"
                stack.append((kind, start if kind == "function" else 0))
                start = 0
            elif c == "}" and stack:
                kind, start = stack.pop()
                if kind == "function":
                    found.append((start, code.count("\n", 0, i) + 1))
            header_start = i + 1
    return found


def cpp_files():
    for folder in ("src", "p4model", "bench"):
        yield from sorted((SOURCE_DIR / folder).rglob("*.cc"))
        yield from sorted((SOURCE_DIR / folder).rglob("*.h"))
    for part in ("dataplane", "host"):
        yield from sorted((SOURCE_DIR / "protocols").glob(f"*/{part}/**/*.cc"))
        yield from sorted((SOURCE_DIR / "protocols").glob(f"*/{part}/**/*.h"))


def test_no_cpp_function_is_longer_than_100_lines():
    long = []
    for f in cpp_files():
        for first, last in cpp_functions(f.read_text(encoding="utf-8")):
            if last - first + 1 > LIMIT:
                long.append(f"{f.relative_to(SOURCE_DIR)}:{first}: {last - first + 1} lines")
    assert not long, "functions over 100 lines:\n" + "\n".join(long)


def test_no_python_function_is_longer_than_100_lines():
    long = []
    for folder in ("python", "analysis", "bench", "scripts"):
        for f in sorted((SOURCE_DIR / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > LIMIT:
                        long.append(f"{f.relative_to(SOURCE_DIR)}:{node.lineno}: {node.name}, {lines} lines")
    assert not long, "functions over 100 lines:\n" + "\n".join(long)


def test_the_scanner_measures_functions_as_a_reader_does():
    text = """namespace a {
// a comment with { braces
struct S {
  int f() const { return 1; }
  void g();
};
void S::g() {
  auto l = [] { return "}"; };
  if (true) {
  }
}
S::S(int x) : x_{x},
  y_(2) {
  x_ = 3;
}
static const int kTable[] = {1'000, 2, 3};
char Quote() { return '"'; }
}  // namespace a
"""
    assert cpp_functions(text) == [(4, 4), (7, 11), (12, 15), (17, 17)]
