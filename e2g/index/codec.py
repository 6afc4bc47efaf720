"""zstd compression of the store's raw mail and diffs, with a dictionary trained on its mail.

The first dictionary is trained from the first large enough batch and kept in the
`zdicts` table; rows record which dictionary they need. Measured on io-uring mail
(2026-12-04): one message at a time with the dictionary, 2.7x smaller; the store
writer's blocks of 64 consecutive messages, 4.2x (PACKAGES.md's ~6x was for small
messages alone).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import zstandard

DICT_SIZE = 112 * 1024
MIN_TRAINING_SAMPLES = 200
# Level 6, not zstd's default 3: on the io-uring archive the store went from 116.5 to
# 111.9 MB (raw blocks 4.1x -> 4.3x, diffs 3.2x -> 3.5x), for 4% more ingest time
# (22.1 -> 23.0 s); the data dir became 49% of the mail. Level 9 saved 0.9 MB more
# for 40% more compression CPU; decompression costs the same at any level.
LEVEL = 6


class Codec:
    """Compresses with the store's dictionary (once there is one); decompresses any row."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._dicts: dict[int, zstandard.ZstdCompressionDict] = {}
        self._dict_id: int | None = None
        self._compressor = zstandard.ZstdCompressor(level=LEVEL)
        self._plain_decompressor = zstandard.ZstdDecompressor()
        self._decompressors: dict[int, zstandard.ZstdDecompressor] = {}
        row = connection.execute(
            "SELECT id, data FROM zdicts ORDER BY id DESC LIMIT 1"
        ).fetchone()
        if row is not None:
            self._use(int(row[0]), bytes(row[1]))

    def _use(self, dict_id: int, data: bytes) -> None:
        dictionary = zstandard.ZstdCompressionDict(data)
        self._dicts[dict_id] = dictionary
        self._dict_id = dict_id
        self._compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=dictionary)

    def maybe_train(self, samples: Sequence[bytes]) -> None:
        """Train the store's first dictionary from `samples` (inside the caller's transaction)."""
        if self._dict_id is not None or len(samples) < MIN_TRAINING_SAMPLES:
            return
        try:
            trained = zstandard.train_dictionary(DICT_SIZE, list(samples))
        except zstandard.ZstdError:
            return  # too little or too uniform data: go on without a dictionary
        data = trained.as_bytes()
        cursor = self._connection.execute(
            "INSERT INTO zdicts(data) VALUES (?)", (data,)
        )
        assert cursor.lastrowid is not None
        self._use(int(cursor.lastrowid), data)

    @property
    def dict_id(self) -> int | None:
        return self._dict_id

    def compress(self, data: bytes) -> bytes:
        return self._compressor.compress(data)

    def decompress(self, data: bytes, dict_id: int | None) -> bytes:
        if dict_id is None:
            return self._plain_decompressor.decompress(data)
        decompressor = self._decompressors.get(dict_id)
        if decompressor is None:
            dictionary = self._dicts.get(dict_id)
            if dictionary is None:
                row = self._connection.execute(
                    "SELECT data FROM zdicts WHERE id = ?", (dict_id,)
                ).fetchone()
                dictionary = zstandard.ZstdCompressionDict(bytes(row[0]))
                self._dicts[dict_id] = dictionary
            decompressor = zstandard.ZstdDecompressor(dict_data=dictionary)
            self._decompressors[dict_id] = decompressor
        return decompressor.decompress(data)
