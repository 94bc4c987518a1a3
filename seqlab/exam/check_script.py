"""The answers check a student runs without installing anything: ``python3 check-ID.py answers-ID.yaml``.

``render`` writes this file's source next to each paper with ``PAPER`` filled in (the shapes of
the answers, never the key, and the answer syntax's limits from ``safeexpr``), so the file is
the whole check: the standard library only, no network, no seqlab. It reads the answers file
(the YAML ``render`` writes, or the notebook's JSON), and reports by question number every answer
the grader could not read: the syntax (``safeexpr``'s whitelist, written again here with Python's
own ``ast``), the number of entries, the letters. ``tests/exam/test_check_script.py`` runs it with
``python3 -I -S`` (no site packages) against the grader's own check on keys and planted mistakes.
It never says whether an answer is right. Kept to the standard library on purpose: a test
imports nothing else from it.
"""

import ast
import json
import re
import sys

PAPER: dict = {}

_IMPLICIT = (
    re.compile(r"(?<![A-Za-z_0-9.])(\d+(?:\.\d*)?)\s*([A-Za-z_][A-Za-z_0-9]*|\()"),
    re.compile(r"(\))\s*([A-Za-z_][A-Za-z_0-9]*|\d+|\()"),
    re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s+([A-Za-z_][A-Za-z_0-9]*|\d+)"),
)


def _hint(source, names):
    for pattern in _IMPLICIT:
        m = pattern.search(source)
        if m and not (pattern is _IMPLICIT[0] and re.fullmatch(r"[eE]\d*", m.group(2))):
            word = m.group(2)
            if word[0].isalpha() and word not in names and word not in PAPER["functions"]:
                # "4560 MiB" in a question that asks no unit: "write 4560*MiB" would lead to another error
                return _unknown(word, names)
            return "implicit multiplication: write a * between the factors"
    return "not a valid expression (check operators and brackets)"


def _unknown(word, names):
    allowed = ", ".join(sorted(n for n in names if n not in ("pi", "E", "e"))) or "none"
    return f"unknown name {word!r} (symbols allowed here: {allowed})"


def _walk(node, names, allow_list, numeric=False):
    if isinstance(node, (ast.Tuple, ast.List)):
        if not allow_list or not node.elts:
            raise ValueError("a single expression is expected, not a list")
        for elt in node.elts:
            _walk(elt, names, False, numeric)
        return
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ValueError("only numbers are allowed as constants")
        return
    if isinstance(node, ast.Name):
        if node.id in PAPER["functions"]:
            raise ValueError(f"{node.id} must be called, e.g. {node.id}(x)")
        if numeric and node.id in ("e", "E"):
            raise ValueError(f"{PAPER['number_asked']}: write the value of {node.id} as a decimal")
        if node.id not in names:
            raise ValueError(_unknown(node.id, names))
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        return _walk(node.operand, names, False, numeric)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        _walk(node.left, names, False, numeric)
        return _walk(node.right, names, False, numeric)
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in PAPER["functions"]:
            raise ValueError("implicit multiplication: write a * between the factors")
        if numeric and name not in PAPER["number_functions"]:
            raise ValueError(f"{PAPER['number_asked']}: {name}(...) is yours to work out; write its value")
        if node.keywords or len(node.args) != PAPER["functions"][name]:
            raise ValueError(f"{name} takes {PAPER['functions'][name]} argument(s)")
        for arg in node.args:
            _walk(arg, names, False, numeric)
        return
    raise ValueError("this kind of expression is not allowed")


def expression_problem(text, names, allow_list=False, numeric=False):
    """'' when the grader's parser reads ``text``, else why not."""
    text = text.strip()
    if len(text) > PAPER["max_length"]:
        return f"longer than {PAPER['max_length']} characters"
    bad = sorted({c for c in text if c not in PAPER["alphabet"]})
    if bad:
        return f"character {bad[0]!r} is not allowed (use numbers, symbol names, + - * / ^ and parentheses)"
    if "__" in text:
        return "names with '__' are not allowed"
    depth, stack = 0, []
    for c in text:
        if c in "([":
            stack.append(c)
            depth = max(depth, len(stack))
        elif c in ")]" and (not stack or stack.pop() != {")": "(", "]": "["}[c]):
            return "unbalanced brackets"
    if stack:
        return "unbalanced brackets"
    if depth > PAPER["max_depth"]:
        return f"brackets nested deeper than {PAPER['max_depth']}"
    source = text.replace("^", "**")
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _hint(source, names)
    try:
        _walk(tree.body, names, allow_list, numeric)
    except ValueError as exc:
        return str(exc)
    except RecursionError:
        return "too deeply nested"
    return ""


# ---------------------------------------------------------------- answers read as a teacher reads them
# What a teacher reads as the same number, rewritten before the parser sees the text (the grader
# imports ``read_as_teacher`` from here, so the check and the grade read alike). Each rule is
# stated to students in the paper's "Writing answers" rule; what could be read two ways (a lone
# comma inside a number, a unit other than the one asked for) is refused with a message saying
# how to write it, never guessed and never scored 0 silently.
# Minus signs and dashes copied from a web page or typed by a word processor read as '-';
# spaces of every width as a space; the invisible ones as nothing; the multiplication signs as '*'.
_CHARS = str.maketrans(
    {
        **{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2212\ufe63\uff0d"},
        **{c: " " for c in "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"},
        **{c: "" for c in "\u200b\u200c\u200d\u2060\ufeff"},
        **{c: "*" for c in "\u00d7\u00b7\u22c5\u2219"},
    }
)
# superscript digits are a power: 10\u00b3 is 10^3, 10\u207b\u00b3 is 10^-3
_SUPER = str.maketrans("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b\u207a", "0123456789-+")
_SUPER_RUN = re.compile("(\\^|\\*\\*)?\\s*([\u2070\u00b9\u00b2\u00b3\u2074-\u2079\u207b\u207a]+)")
# 1\u00b75 is a decimal point in British print and a product elsewhere: refused, unless a power
# of ten follows (1.2\u00b710^3, 1.2\u00b710\u00b3 is scientific notation)
_DOT_DIGITS = re.compile(
    "\\d\\s*[\u00b7\u22c5]\\s*(?!10\\s*(?:\\^|\\*\\*|[\u2070\u00b9\u00b2\u00b3\u2074-\u2079\u207b\u207a]))\\d+"
)
# 1.2 x 10^3: the letter x used as a times sign, only right before a power of ten
_X10 = re.compile(r"(\d)\s*[xX]\s*(?=10\s*(\^|\*\*))")
# a word closing an entry right after a number or a bracket: a unit ("4560 MiB", "1.42 nats")
_UNIT = re.compile(r"(?<=[\d)\]])\s*([A-Za-z]+)\s*(?=,|\]|$)")
# the spellings of the units a question may ask for (``marking.asked_unit`` names the unit)
UNIT_SPELLINGS = {"MiB": ("MiB",), "nats": ("nats", "nat")}
# 93 251 (any width of space): groups of three digits after the first, in the integer part only
_SPACE_GROUPS = re.compile(r"(?<![\w.])(\d{1,3})((?: \d{3})+)(?![\w])")
# 1,234,567 and 1,234.5: commas that cannot be a decimal comma (two of them, or one before a point)
_COMMA_GROUPS = re.compile(r"(?<![\w.,(])\d{1,3}(?:(?:,\d{3}){2,}(?:\.\d+)?|(?:,\d{3})+\.\d+)(?![\w,])")
_LONE_COMMA = re.compile(r"(?<![\w.])(\d+),(\d+)(?![\w.])")
# 93,251 where an integer is asked: no decimal comma can be meant, so the commas are thousands
_INT_THOUSANDS = re.compile(r"(?<![\w.,(])[1-9]\d{0,2}(?:,\d{3})+(?![\w.,])")
_CONSTANTS = ("e", "E", "pi")
# "0.638 (nats)": a unit in brackets after the number reads as the unit
_PAREN_UNIT = re.compile(r"(?<=[\d\s])\(\s*([A-Za-z]+)\s*\)")
# "6x3x20", "6 × 3 × 20": sizes written as a product where several numbers are asked
_SIZES_AS_PRODUCT = re.compile(r"\s*\d+(?:\s*[xX\u00d7*]\s*\d+)+\s*")


def _top_commas(text):
    """Where the commas the parser splits entries at are: those outside a function's brackets."""
    found, calls = [], []
    for i, c in enumerate(text):
        if c in "([":
            calls.append(c == "(" and i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"))
        elif c in ")]" and calls:
            calls.pop()
        elif c == "," and not any(calls):
            found.append(i)
    return found


def read_as_teacher(text, kind, entries=1, unit="", error=ValueError, prefix="", integer=False):
    """``text`` as the grader's parser is to read it, or ``error(prefix + why)`` for a form that
    could be read two ways. ``entries``: how many numbers the answer holds; ``unit``: the unit
    the question asks for ("" for a plain number); ``integer``: a single integer is asked, so a
    comma between groups of three digits is a thousands separator (93,251). A list may be
    separated by semicolons (0.5; 93,251.5): each entry is then read as a single number."""
    if kind == "numeric" and text.rstrip().endswith(".") and not text.rstrip().endswith(".."):
        # the full stop that ends a written answer ("1.453 nat.", "93251."): a teacher reads past it
        # (the seventh audit found "1.453 nat" read and "1.453 nat." refused)
        text = text.rstrip()[:-1]
    if kind == "numeric" and entries > 1 and _SIZES_AS_PRODUCT.fullmatch(text):
        sizes = ", ".join(re.findall(r"\d+", text))
        raise error(
            f"{prefix}{entries} numbers are asked, written as a product: write them separated by commas, {sizes}"
        )
    if kind == "numeric" and ";" in text:
        parts = [read_as_teacher(part, kind, 1, unit, error, prefix).strip() for part in text.split(";")]
        return ", ".join(parts)
    dot = _DOT_DIGITS.search(text)
    if dot:
        raise error(
            f"{prefix}a raised dot between digits ({dot.group(0)}) could be a decimal point or a times sign: write . for a decimal point and * for a product"
        )
    text = _SUPER_RUN.sub(lambda m: "^(" + m.group(2).translate(_SUPER) + ")", text.translate(_CHARS))
    if kind != "numeric":
        return text
    text = _X10.sub(r"\1*", text)
    if unit:
        text = _PAREN_UNIT.sub(r" \1", text)
    for m in reversed(list(_UNIT.finditer(text))):
        word = m.group(1)
        if word in _CONSTANTS:
            continue
        # the asked unit in any case ("2890 mib" is MiB: no other unit is spelled so)
        if unit and word.lower() in {s.lower() for s in UNIT_SPELLINGS.get(unit, ())}:
            text = text[: m.start()] + text[m.end(1) :]
            continue
        if unit:
            raise error(
                f"{prefix}this question asks for {unit}, not {word!r}: write the number in {unit}, alone or as 12.5 {unit}"
            )
        raise error(f"{prefix}this question asks for a plain number: write it without {word!r}")
    text = _SPACE_GROUPS.sub(lambda m: m.group(1) + m.group(2).replace(" ", ""), text)
    if entries == 1:
        if integer:
            text = _INT_THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)
        text = _COMMA_GROUPS.sub(lambda m: m.group(0).replace(",", ""), text)
    commas = _top_commas(text)
    lone = [m for m in _LONE_COMMA.finditer(text) if m.end(1) in commas]
    if lone and (entries == 1 or len(commas) + 1 != entries):
        a, b = lone[0].groups()
        thousands = len(b) == 3  # 93,251: a decimal comma, or a thousands separator; 0,5: a decimal comma
        both = f"write {a}.{b} for a decimal" + (f" or {a}{b} for thousands" if thousands else "")
        what = "a decimal comma or a thousands separator" if thousands else "a decimal comma"
        raise error(f"{prefix}the comma in {a},{b} could be {what}, and is not read: {both}")
    return text


def answer_problem(shape, raw):
    """The shape rules of ``marking``: '' when readable, else why not."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return "no answer"
    if isinstance(raw, list):
        raw = ", ".join(str(x) for x in raw)
    kind = shape["kind"]
    try:
        text = read_as_teacher(
            str(raw), kind, shape.get("entries", 1), shape.get("unit", ""), integer=shape.get("integer", False)
        ).strip()
    except ValueError as exc:
        return str(exc)
    if kind == "numeric":
        problem = expression_problem(text, {"pi"}, allow_list=True, numeric=True)
        if problem:
            return problem
        tree = ast.parse(text.replace("^", "**"), mode="eval").body
        got = len(tree.elts) if isinstance(tree, (ast.Tuple, ast.List)) else 1
        want = shape["entries"]
        return "" if got == want else f"expected {want} number{'s' if want > 1 else ''}, got {got}"
    if kind == "symbolic":
        names = set(shape["symbols"]) | ({"pi", "E", "e"} - set(shape["symbols"]))
        return expression_problem(text, names)
    if kind == "choice":
        letters = [chr(ord("A") + i) for i in range(shape["options"])]
        ok = text.strip("()[]. ").upper() in letters
        return "" if ok else f"give one letter, {letters[0]}-{letters[-1]}"
    ok = text.strip(".").lower() in {"true", "t", "yes", "y", "1", "false", "f", "no", "n", "0"}
    return "" if ok else "give true or false"


def _scalar(value, number):
    value = value.strip()
    if value.startswith('"'):
        end = re.match(r'"(?:[^"\\]|\\.)*"', value)
        if not end:
            raise ValueError(f"line {number}: a quoted string opened on this line is not closed")
        return json.loads(end.group(0))
    if value.startswith("'"):
        end = re.match(r"'(?:[^']|'')*'", value)
        if not end:
            raise ValueError(f"line {number}: a quoted string opened on this line is not closed")
        return end.group(0)[1:-1].replace("''", "'")
    return value.split(" #", 1)[0].strip()


def read_answers(text):
    """(student, {id: answer}) from the answers file: JSON, or the flat YAML ``render`` writes."""
    if text.lstrip().startswith("{"):
        data = json.loads(text)
        return str(data.get("student", "")), dict(data.get("answers") or {})
    student, answers, inside = "", {}, False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^(\s*)([A-Za-z0-9_.@-]+)\s*:(.*)$", line)
        if not m:
            raise ValueError(f'line {number}: cannot read this line; write   question.id: "answer"')
        indent, key, value = m.groups()
        if not indent and key == "answers":
            inside = True
        elif not indent and key == "student":
            student = str(_scalar(value, number))
        elif indent and inside:
            answers[key] = _scalar(value, number)
        else:
            raise ValueError(f"line {number}: only 'student:' and 'answers:' belong at the left margin")
    return student, answers


def report(shapes, problem_of):
    """One line per unreadable answer, by question number, and one line for every question not
    answered yet (``seqlab exam check`` reports through this too, with the grader's parsers)."""
    found = [(shape, problem_of(shape)) for shape in shapes]
    # by number only: the file's id is the number too (q12), a bank id would name the concept
    lines = [f"answer {s['number']}: {p}" for s, p in found if p and p != "no answer"]
    unanswered = [str(s["number"]) for s, p in found if p == "no answer"]
    if unanswered:
        lines.append(f"no answer yet to question(s) {', '.join(unanswered)} ({len(unanswered)} of {len(shapes)})")
    return lines


def problems(answers):
    return report(PAPER["questions"], lambda shape: answer_problem(shape, answers.get(shape["id"])))


def main(argv):
    if len(argv) != 2:
        print(f"usage: python3 {argv[0]} answers-{PAPER['student']}.yaml")
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            student, answers = read_answers(f.read())
    except (OSError, ValueError) as exc:
        print(f"{argv[1]}: {exc}")
        return 1
    found = problems(answers)
    if student != PAPER["student"]:
        found.insert(0, f"the file says student: {student!r}; write student: {PAPER['student']!r}")
    print("\n".join(found) if found else "all answers readable")
    if found:
        print("only readability is checked, never whether an answer is right")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
