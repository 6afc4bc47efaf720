"""Archive readers: bytes out of mbox files, Maildirs, public-inbox repositories and
pipermail months, each message with a resumable checkpoint token. No parsing of mail
happens here (that is `e2g.mail`), and no store IO (that is `e2g.index`): a reader only
finds message boundaries, decompresses, and says where it stopped.

`detect` names the kind of each path; `compression` reads compressed streams.
"""
