"""Tokens of source files, for token-level blame: what a token is, never how git runs.

`lex` turns a file's text into tokens (identifiers, keywords, literals, operators; a
whole comment or string literal is one token; whitespace is none) and into the "token
view" that `e2g.git.tokenview` writes into a throwaway history, one token a line.
"""
