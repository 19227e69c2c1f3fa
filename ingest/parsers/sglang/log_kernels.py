"""Compiled passes over a block of log bytes: where its lines are, and one pass over its lines
that checks each against the file's line templates and reads a matching line's numbers,
timestamp and the bounds of its text parts (and marks the HTTP access lines among the rest);
then, from those bounds, the matched lines' rank tags numbered and their ``extra`` JSON written.

Imported on first use (``log_lines.kernels``): numba and LLVM add ~110 MB to a process, which
the dashboard, importing the parsers to ingest uploads, should only pay when it reads a log.

Why compiled: a template read with Arrow took ~40 kernel calls per block (the anchored RE2
check, searches for the prefix parts, one substring copy and cast per key), about 5 CPU-seconds
per GB. Here each line is walked once, byte by byte, by numba-compiled code that releases the
GIL, so the two block workers run in parallel.

A template is a *program*: a short list of steps, each matching one part of its pattern
(``sglang_templates.Template.pattern``) the way RE2 would. The kernel may only be stricter than
the pattern, never looser: a line it refuses goes on to the next template and then to the
general reader, which reads every line the same way. It refuses, besides what the pattern
refuses, what it could not convert exactly: an impossible date or time, and a float whose
digits do not fit in 53 bits (its value could not be computed as one correctly rounded
division, which is what Python and Arrow give).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ingest.parsers.logs.log_lines import HTTP_ACCESS_METHODS
from ingest.parsers.sglang.sglang_grammar import BATCH as STEM_SEARCH
from ingest.parsers.sglang.sglang_grammar import CONFIG_SEARCH
from ingest.parsers.sglang.template_steps import (
    BOOL_VALUE,
    BRACKET_TAGS,
    CUSTOM_TAGS,
    DATETIME,
    DIGITS,
    EXTRA_VALUE,
    FLOAT_VALUE,
    INT_VALUE,
    LABEL,
    LABEL_END,
    LABEL_START,
    LITERAL,
    MAX_FRACTION_DIGITS,
    TAGS_END,
    TAGS_START,
    TIMESTAMP,
)

# No reference counting: nothing here allocates, and numba's refcount pruning cannot remove the
# increments it puts around every array handed to a helper inside a branch (numba issue #2350);
# measured 9.6 -> 3.8 ms per 4 MB block. The GIL is released, so two blocks are read at once.
COMPILED = {"cache": True, "nogil": True, "_nrt": False}
# The step loop and the byte readers are inlined into the pass (numba IR); the readers of a whole
# part (timestamp, tags, a float ...) are not: inlining them too made the pass 13 % faster (2.39 ->
# 2.09 ms per block) but doubled the one-time compile after an install (3.5 -> 6.4 s, 250 -> 510 MB).
INLINED = {**COMPILED, "inline": "always"}
HELPER = COMPILED

EXACT_MANTISSA = 2**53
ZERO, NINE, MINUS, DOT, COMMA, COLON, SPACE, TAB, NEWLINE, RETURN = (ord(char) for char in "09-.,: \t\n\r")
UNDERSCORE, UPPER_A, UPPER_Z = ord("_"), ord("A"), ord("Z")
OPEN_BRACE, CLOSE_BRACE = ord("{"), ord("}")
# Byte values (numba constants). " batch" is the general reader's own search (sglang_grammar.BATCH): a line
# without it is one the general reader would not take, which is what lets scan_lines skip it.
BATCH, TRUE, FALSE = tuple(STEM_SEARCH.encode()), tuple(b"True"), tuple(b"False")
SERVER_ARGS = tuple(CONFIG_SEARCH.encode())
QUOTE, FORM_FEED = ord('"'), ord("\f")
HTTP_METHODS = np.frombuffer("".join(HTTP_ACCESS_METHODS).encode(), dtype=np.uint8)
HTTP_METHOD_ENDS = np.cumsum([0, *map(len, HTTP_ACCESS_METHODS)])
HTTP_VERSION = tuple(b" HTTP/")


@njit(**COMPILED)
def scan_lines(
    data: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    steps: np.ndarray,
    literals: np.ndarray,
    program_bounds: np.ndarray,
    matched_line: np.ndarray,
    matched_template: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    bounds: np.ndarray,
    marks: np.ndarray,
    has_batch: np.ndarray,
    http_access: np.ndarray,
) -> int:
    """Try each line against the programs in order; the first that matches wins. Returns how many
    lines matched: row r of every output belongs to line ``matched_line[r]``. ``has_batch`` marks
    the lines that matched none but hold " batch": only those can be stats lines of another shape.
    ``http_access`` marks those that matched none, are HTTP access lines (``log_lines.NOISE_KINDS``)
    and do not hold "server_args=" (a config line is looked for before noise)."""
    matched = 0
    for line in range(len(starts)):
        has_batch[line] = False
        http_access[line] = False
        for template in range(len(program_bounds)):
            if _run(data, starts[line], ends[line], steps, program_bounds[template, 0], program_bounds[template, 1],
                    literals, matched, ints, floats, bounds, marks):
                matched_line[matched] = line
                matched_template[matched] = template
                matched += 1
                break
        else:
            has_batch[line] = _holds_text(data, starts[line], ends[line], BATCH)
            http_access[line] = _is_http_access(data, starts[line], ends[line]) and not _holds_text(
                data, starts[line], ends[line], SERVER_ARGS
            )
    return matched


@njit(**HELPER)
def _holds_text(data, start, end, text):
    for at in range(start, end - len(text) + 1):
        if _holds_at(data, at, end, text):
            return True
    return False


@njit(**HELPER)
def _is_http_access(data, start, end):
    """Whether RE2 finds ``"(?:GET|POST|...) \\S* HTTP/\\d`` in the line. ``\\S*`` can only end where
    the run of non-space bytes after the method ends (the next byte must be the space of " HTTP/"),
    so each quote followed by a method and a space is checked at that one place."""
    for at in range(start, end):
        if _at(data, at) != QUOTE:
            continue
        for method in range(len(HTTP_METHOD_ENDS) - 1):
            first, last = HTTP_METHOD_ENDS[method], HTTP_METHOD_ENDS[method + 1]
            run = at + 1 + last - first
            if run >= end or _at(data, run) != SPACE or not _same_as(data, at + 1, HTTP_METHODS, first, last - first):
                continue
            run += 1
            while run < end and not _is_re2_space(_at(data, run)):
                run += 1
            if _holds_at(data, run, end, HTTP_VERSION) and run + len(HTTP_VERSION) < end:
                digit = _at(data, run + len(HTTP_VERSION))
                if ZERO <= digit <= NINE:
                    return True
    return False


@njit(**INLINED)
def _same_as(data, at, text, first, length):
    """Whether ``data[at:at + length]`` equals ``text[first:first + length]``."""
    for offset in range(length):
        if _at(data, at + offset) != _at(text, first + offset):
            return False
    return True


@njit(**INLINED)
def _is_re2_space(byte):
    return byte == SPACE or byte == TAB or byte == NEWLINE or byte == RETURN or byte == FORM_FEED


@njit(**INLINED)
def _run(data, at, end, steps, first, last, literals, row, ints, floats, bounds, marks):
    for step in range(first, last):
        code, a, b = steps[step, 0], steps[step, 1], steps[step, 2]
        if code == LITERAL:
            if at + b > end:
                return False
            differ = 0
            for offset in range(b):  # no early exit: most lines match, and the loop stays branch-free
                differ |= _at(data, at + offset) ^ _at(literals, a + offset)
            if differ:
                return False
            at += b
        elif code == DATETIME:
            at = _datetime(data, at, end, a, row, marks)
        elif code == BRACKET_TAGS or code == CUSTOM_TAGS:
            marks[TAGS_START, row] = at
            at = _tags(data, at, end, code == BRACKET_TAGS)
            marks[TAGS_END, row] = at
        elif code == DIGITS:
            count = _digit_run(data, at, end)
            if count < a or count > b:
                return False
            at += count
        elif code == LABEL:
            count = _digit_run(data, at, end)
            if count == 0 or count > 18 or (count > 1 and _at(data, at) == ZERO):
                return False
            marks[LABEL_START, row] = at
            at += count
            marks[LABEL_END, row] = at
        elif code == INT_VALUE:
            count = _digit_run(data, at, end)
            if count == 0 or count > 18:
                return False
            ints[a, row] = _integer(data, at, count)
            at += count
        elif code == FLOAT_VALUE:
            at = _float(data, at, end, row, a, floats)
        elif code == BOOL_VALUE:
            at = _bool(data, at, end, row, a, ints)
        elif code == EXTRA_VALUE:
            bounds[2 * a, row] = at
            at = _extra_number(data, at, end)
            bounds[2 * a + 1, row] = at
        else:  # LINE_END
            while at < end and (_at(data, at) == COMMA or _at(data, at) == SPACE or _at(data, at) == TAB):
                at += 1
            return at == end
        if at < 0:
            return False
    return False


@njit(**INLINED)
def _at(data, index):
    """``data[index]`` for an index known not to be negative: numba wraps a negative signed index
    around, a test and branch on every read (unsigned indexes made scan_lines 25 % faster)."""
    return data[np.uint64(index)]


@njit(**INLINED)
def _digit_run(data, at, end):
    count = 0
    while at + count < end and ZERO <= _at(data, at + count) <= NINE:
        count += 1
    return count


@njit(**INLINED)
def _integer(data, at, count):
    value = 0
    for offset in range(count):
        value = value * 10 + (_at(data, at + offset) - ZERO)
    return value


@njit(**INLINED)
def _fixed_digits(data, at, count):
    """The number in data[at:at + count] when all of it is digits, else -1."""
    value = 0
    for offset in range(count):
        digit = _at(data, at + offset)
        if digit < ZERO or digit > NINE:
            return -1
        value = value * 10 + (digit - ZERO)
    return value


@njit(**HELPER)
def _datetime(data, at, end, fraction_digits, row, marks):
    """Reads "YYYY-MM-DD HH:MM:SS(.f)" into marks[TIMESTAMP, row] (microseconds since 1970); the
    position after it, or -1 when it is not one or names no real moment (2025-02-30, 24:00:00)."""
    length = 19 + (fraction_digits + 1 if fraction_digits > 0 else 0)
    if at + length > end:
        return -1
    separators = (_at(data, at + 4), _at(data, at + 7), _at(data, at + 10), _at(data, at + 13), _at(data, at + 16))
    if separators != (MINUS, MINUS, SPACE, COLON, COLON):
        return -1
    year, month, day = _fixed_digits(data, at, 4), _fixed_digits(data, at + 5, 2), _fixed_digits(data, at + 8, 2)
    hour, minute, second = _fixed_digits(data, at + 11, 2), _fixed_digits(data, at + 14, 2), _fixed_digits(data, at + 17, 2)
    if year < 1 or not 1 <= month <= 12 or not 1 <= day <= _days_in_month(year, month):
        return -1  # a field with a non-digit reads as -1, which these ranges refuse too
    if not 0 <= hour <= 23 or not 0 <= minute <= 59 or not 0 <= second <= 59:
        return -1
    micros = 0
    if fraction_digits > 0:
        if _at(data, at + 19) != DOT and _at(data, at + 19) != COMMA:
            return -1
        micros = _fixed_digits(data, at + 20, fraction_digits)
        if micros < 0:
            return -1
        for _ in range(MAX_FRACTION_DIGITS - fraction_digits):
            micros *= 10
    seconds = ((_days_since_1970(year, month, day) * 24 + hour) * 60 + minute) * 60 + second
    marks[TIMESTAMP, row] = seconds * 1_000_000 + micros
    return at + length


@njit(**HELPER)
def _days_in_month(year, month):
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month == 4 or month == 6 or month == 9 or month == 11 else 31


@njit(**HELPER)
def _days_since_1970(year, month, day):
    """Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's days_from_civil)."""
    year -= 1 if month <= 2 else 0
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month - 3 if month > 2 else month + 9) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


@njit(**HELPER)
def _tags(data, at, end, bracket):
    """The end of the rank tags starting at ``at``: as many whole tags as there are (each one is
    either there whole or not at all, so stopping at the first that is not is what RE2 does)."""
    while True:
        tag = at + 1 if bracket else at  # bracket: " TP0"; custom: "TP0 "
        if bracket and (at >= end or _at(data, at) != SPACE):
            return at
        if tag >= end or _at(data, tag) < UPPER_A or _at(data, tag) > UPPER_Z:
            return at
        tag += 1
        while tag < end and (UPPER_A <= _at(data, tag) <= UPPER_Z or _at(data, tag) == UNDERSCORE):
            tag += 1
        count = _digit_run(data, tag, end)
        if count == 0 or count > 9:
            return at
        tag += count
        if not bracket:
            if tag >= end or _at(data, tag) != SPACE:
                return at
            tag += 1
        at = tag


@njit(**HELPER)
def _float(data, at, end, row, slot, floats):
    negative = at < end and _at(data, at) == MINUS
    if negative:
        at += 1
    whole = _digit_run(data, at, end)
    if whole == 0 or whole > 15:
        return -1
    fraction = 0
    if at + whole + 1 < end and _at(data, at + whole) == DOT:
        fraction = _digit_run(data, at + whole + 1, end)
        if fraction > 15:
            return -1
    mantissa = 0
    for offset in range(whole):
        mantissa = mantissa * 10 + (_at(data, at + offset) - ZERO)
    for offset in range(fraction):
        if mantissa >= EXACT_MANTISSA // 10:
            return -1
        mantissa = mantissa * 10 + (_at(data, at + whole + 1 + offset) - ZERO)
    if mantissa >= EXACT_MANTISSA:
        return -1
    power = 1.0
    for _ in range(fraction):
        power *= 10.0  # exact up to 1e22
    value = mantissa / power  # both exact: one correctly rounded division
    floats[slot, row] = -value if negative else value
    return at + whole + (fraction + 1 if fraction else 0)


@njit(**HELPER)
def _bool(data, at, end, row, slot, ints):
    if _holds_at(data, at, end, TRUE):
        ints[slot, row] = 1
        return at + len(TRUE)
    if _holds_at(data, at, end, FALSE):
        ints[slot, row] = 0
        return at + len(FALSE)
    return -1


@njit(**INLINED)
def _holds_at(data, at, end, text):
    """Whether ``data[at:end]`` starts with ``text`` (a tuple of byte values)."""
    if at + len(text) > end:
        return False
    for offset in range(len(text)):
        if _at(data, at + offset) != text[offset]:
            return False
    return True


@njit(**HELPER)
def _extra_number(data, at, end):
    if at < end and _at(data, at) == MINUS:
        at += 1
    whole = _digit_run(data, at, end)
    if whole == 0 or whole > 15 or (whole > 1 and _at(data, at) == ZERO):
        return -1
    at += whole
    if at + 1 < end and _at(data, at) == DOT:
        fraction = _digit_run(data, at + 1, end)
        if fraction > 15:
            return -1
        if fraction:
            at += fraction + 1
    return at


@njit(**COMPILED)
def distinct_ranges(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, table: np.ndarray, firsts: np.ndarray, codes: np.ndarray) -> int:
    """Number the distinct texts ``data[starts[r]:ends[r]]`` (a line's rank tags: a few per file) in
    order of first appearance: ``codes[r]`` is row r's number, ``firsts[k]`` the first row with
    text k. ``table`` (all -1, a power of two long) is the hash table. Returns how many there are,
    or -1 once they would fill half of ``table`` or ``firsts``."""
    count = 0
    mask = len(table) - 1
    for row in range(len(starts)):
        start, end = starts[row], ends[row]
        slot = _fnv1a(data, start, end) & mask
        while True:
            known = table[slot]
            if known < 0:
                if 2 * (count + 1) > len(table) or count == len(firsts):
                    return -1
                table[slot] = count
                firsts[count] = row
                codes[row] = count
                count += 1
                break
            first = firsts[known]
            if ends[first] - starts[first] == end - start and _same_as(data, start, data, starts[first], end - start):
                codes[row] = known
                break
            slot = (slot + 1) & mask
    return count


@njit(**INLINED)
def _fnv1a(data, start, end):
    value = np.uint64(14695981039346656037)
    for index in range(start, end):
        value = (value ^ np.uint64(_at(data, index))) * np.uint64(1099511628211)
    return np.int64(value >> np.uint64(1))


@njit(**COMPILED)
def json_object_lengths(
    values: np.ndarray,
    key_offsets: np.ndarray,
    member_offsets: np.ndarray,
    member_codes: np.ndarray,
    labels: np.ndarray,
    label_key_length: int,
    lengths: np.ndarray,
) -> None:
    """Per row, the length of its ``extra`` JSON object (``write_json_objects``). Every member is
    counted as written, ``key: value, ``: the object has the same length, its last ", " given up
    for the braces."""
    for row in range(len(lengths)):
        size = 0
        for key in range(len(key_offsets) - 1):
            size += key_offsets[key + 1] - key_offsets[key] + values[2 * key + 1, row] - values[2 * key, row] + 2
        code = member_codes[row]
        size += member_offsets[code + 1] - member_offsets[code]
        if labels.shape[1]:
            size += label_key_length + labels[1, row] - labels[0, row] + 2
        lengths[row] = size


@njit(**COMPILED)
def write_json_objects(
    data: np.ndarray,
    values: np.ndarray,
    keys: np.ndarray,
    key_offsets: np.ndarray,
    members: np.ndarray,
    member_offsets: np.ndarray,
    member_codes: np.ndarray,
    labels: np.ndarray,
    label_key: np.ndarray,
    offsets: np.ndarray,
    out: np.ndarray,
) -> None:
    """Write row r's ``{"key": value, ..., <member text>, "label key": label}`` at ``out[offsets[r]:]``:
    the values and labels are ``data`` ranges (JSON numbers as logged), ``members`` hold the text
    of the row's member code (``"ep_rank": 2, `` ...). ``out`` has one byte to spare at its end:
    each object is written with its last ", " and then closed over it."""
    for row in range(len(offsets) - 1):
        start, end = offsets[row], offsets[row + 1]
        at = start + 1
        out[start] = OPEN_BRACE
        for key in range(len(key_offsets) - 1):
            at = _copy(keys, key_offsets[key], key_offsets[key + 1], out, at)
            at = _copy(data, values[2 * key, row], values[2 * key + 1, row], out, at)
            at = _separator(out, at)
        code = member_codes[row]
        at = _copy(members, member_offsets[code], member_offsets[code + 1], out, at)
        if labels.shape[1]:
            at = _copy(label_key, 0, len(label_key), out, at)
            at = _copy(data, labels[0, row], labels[1, row], out, at)
            at = _separator(out, at)
        out[end - 1] = CLOSE_BRACE


@njit(**INLINED)
def _copy(source, start, end, out, at):
    for index in range(start, end):
        out[np.uint64(at)] = _at(source, index)
        at += 1
    return at


@njit(**INLINED)
def _separator(out, at):
    out[np.uint64(at)] = COMMA
    out[np.uint64(at + 1)] = SPACE
    return at + 2


