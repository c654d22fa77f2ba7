"""GoogleSQL scripts as text: the statements of a multi-statement query and the blocks around
them (BEGIN ... END, IF ... THEN ... ELSEIF ... ELSE ... END IF).

sqlglot parses the statements but not the blocks (it turns IF and BEGIN into opaque commands),
so the blocks are found here on a light token stream that knows GoogleSQL's quotes and comments
(a `;` or `END` inside a string, a quoted name or a comment is not a boundary).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from vertexkit.local.bigquery.query_error import QueryError, not_supported

# Quoted text and comments first (they hide keywords and semicolons), then words and marks.
TOKEN = re.compile(
    r"""(?P<skip>'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`"""
    r"""|--[^\n]*|\#[^\n]*|/\*.*?\*/)"""
    r"""|(?P<word>[A-Za-z_][A-Za-z_0-9]*)|(?P<mark>[;()])""",
    re.DOTALL,
)
# Scripting statements the local BigQuery does not run: refused by name.
UNSUPPORTED_SCRIPTING = {
    "LOOP": "LOOP",
    "WHILE": "WHILE",
    "REPEAT": "REPEAT",
    "FOR": "FOR ... IN",
    "BREAK": "BREAK",
    "LEAVE": "LEAVE",
    "CONTINUE": "CONTINUE",
    "ITERATE": "ITERATE",
    "RETURN": "RETURN",
    "RAISE": "RAISE",
    "CALL": "CALL",
    "EXECUTE": "EXECUTE IMMEDIATE",
    "CASE": "CASE statement",
    "EXCEPTION": "BEGIN ... EXCEPTION",
    "ASSERT": "ASSERT",
    "COMMIT": "transactions (BEGIN TRANSACTION / COMMIT)",
    "ROLLBACK": "transactions (BEGIN TRANSACTION / COMMIT)",
}


@dataclass(frozen=True)
class Token:
    word: str  # upper-cased word, or the mark itself (";", "(", ")")
    start: int
    end: int


@dataclass
class Statement:
    sql: str


@dataclass
class Block:
    body: list[Node]


@dataclass
class If:
    branches: list[tuple[str, list[Node]]]  # (condition, body), IF then each ELSEIF
    otherwise: list[Node] = field(default_factory=list)


Node = Statement | Block | If


def tokens(sql: str) -> list[Token]:
    out = []
    for match in TOKEN.finditer(sql):
        if match.group("skip") is None:
            out.append(Token(match.group(0).upper(), match.start(), match.end()))
    return out


@functools.lru_cache(maxsize=1024)  # asked of every query: the same texts come again
def is_script(sql: str) -> bool:
    """More than one statement, or one that only a script has (DECLARE, SET, IF, BEGIN,
    and the procedural statements refused by name)."""
    words = tokens(sql)
    if not words:
        return False
    first = words[0].word
    if first in ("DECLARE", "SET", "IF", "BEGIN") or first in UNSUPPORTED_SCRIPTING:
        return True
    semicolons = [i for i, token in enumerate(words) if token.word == ";"]
    return any(i < len(words) - 1 for i in semicolons)


def parse(sql: str) -> list[Node]:
    parser = _Parser(sql, tokens(sql))
    nodes = parser.nodes(stop=())
    if parser.at < len(parser.words):
        raise QueryError(f"Syntax error: Unexpected keyword {parser.words[parser.at].word}")
    return nodes


def _opens_block(words: list[Token], at: int) -> bool:
    """BEGIN opens a block; BEGIN TRANSACTION (or BEGIN;) is a transaction."""
    if words[at].word != "BEGIN":
        return False
    following = words[at + 1].word if at + 1 < len(words) else ";"
    return following not in ("TRANSACTION", ";")


class _Parser:
    def __init__(self, sql: str, words: list[Token]) -> None:
        self.sql = sql
        self.words = words
        self.at = 0

    def peek(self, offset: int = 0) -> str:
        index = self.at + offset
        return self.words[index].word if index < len(self.words) else ""

    def expect(self, word: str) -> None:
        if self.peek() != word:
            found = self.peek() or "end of script"
            raise QueryError(f"Syntax error: Expected {word} but got {found}")
        self.at += 1

    def nodes(self, stop: tuple[str, ...]) -> list[Node]:
        out: list[Node] = []
        while self.at < len(self.words):
            word = self.peek()
            if word == ";":
                self.at += 1
            elif word in stop:
                return out
            else:
                out.append(self.node())
        if stop:
            raise QueryError(f"Syntax error: Expected {stop[-1]} but got end of script")
        return out

    def node(self) -> Node:
        word = self.peek()
        if word in UNSUPPORTED_SCRIPTING or (
            word == "BEGIN" and not _opens_block(self.words, self.at)
        ):
            name = "transactions (BEGIN TRANSACTION / COMMIT)" if word == "BEGIN" else None
            raise not_supported(name or UNSUPPORTED_SCRIPTING[word])
        if word == "BEGIN":
            self.at += 1
            body = self.nodes(stop=("EXCEPTION", "END"))
            if self.peek() == "EXCEPTION":
                raise not_supported(UNSUPPORTED_SCRIPTING["EXCEPTION"])
            self.expect("END")
            return Block(body)
        if word == "IF":
            return self.if_block()
        return Statement(self.statement())

    def if_block(self) -> If:
        self.expect("IF")
        branches = [(self.condition(), self.nodes(stop=("ELSEIF", "ELSE", "END")))]
        while self.peek() == "ELSEIF":
            self.at += 1
            branches.append((self.condition(), self.nodes(stop=("ELSEIF", "ELSE", "END"))))
        otherwise: list[Node] = []
        if self.peek() == "ELSE":
            self.at += 1
            otherwise = self.nodes(stop=("END",))
        self.expect("END")
        self.expect("IF")
        return If(branches, otherwise)

    def condition(self) -> str:
        """The text up to the THEN that ends it (CASE ... WHEN ... THEN ... END nests)."""
        start, depth = self.at, 0
        while self.at < len(self.words):
            word = self.peek()
            if word == "CASE":
                depth += 1
            elif word == "END" and depth:
                depth -= 1
            elif word == "THEN" and not depth:
                text = self._text(start, self.at)
                self.at += 1
                return text
            self.at += 1
        raise QueryError("Syntax error: Expected THEN but got end of script")

    def statement(self) -> str:
        """The text up to the `;` (outside parentheses) or the end of the script."""
        start, depth = self.at, 0
        while self.at < len(self.words):
            word = self.peek()
            if word == "(":
                depth += 1
            elif word == ")":
                depth -= 1
            elif word == ";" and depth <= 0:
                break
            self.at += 1
        return self._text(start, self.at)

    def _text(self, start: int, end: int) -> str:
        """The script's own text from token `start` up to (not including) token `end`."""
        begin = self.words[start].start
        finish = self.words[end].start if end < len(self.words) else len(self.sql)
        return self.sql[begin:finish].strip()
