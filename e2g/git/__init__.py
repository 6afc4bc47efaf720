"""The only code that runs git: repository discovery, revisions, and the streaming
commit readers that `link`, `match` and `stats` use. Diffs are parsed with the rules
of `e2g.mail.patch`, so a commit and a mail are read the same way."""
