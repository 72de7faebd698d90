-- depends: 0039.the-background-login
-- The log's shape checks, the same rules at a tenth of the cost (issue 36's hot path). 0002's
-- CHECKs on events use bounded repeats ({0,99}, {64}), which PostgreSQL's regex engine expands
-- into states it rebuilds on every row: about 0.38 M instructions an event inserted (stream_id
-- about 195 k, each hash about 94 k; counted under callgrind), a sixth of a play's whole write.
-- The same rules as an unbounded class and a length: a stream id of 1 to 100 characters, a
-- lower-case letter then lower-case letters, digits and hyphens; a hash of exactly 64 lower-case
-- hex digits (the class admits only ASCII, so its octets are its characters). Every row already
-- satisfies them (it satisfied the old ones); VALIDATE checks so anyway, in this migration,
-- which runs with the app hosts stopped (README: The insider, upgrading in place).
ALTER TABLE events
    ADD CONSTRAINT events_stream_id_shape
        CHECK (char_length(stream_id) <= 100 AND stream_id ~ '^[a-z][a-z0-9-]*$') NOT VALID,
    ADD CONSTRAINT events_prev_hash_shape
        CHECK (octet_length(prev_hash) = 64 AND prev_hash ~ '^[0-9a-f]*$') NOT VALID,
    ADD CONSTRAINT events_hash_shape
        CHECK (octet_length(hash) = 64 AND hash ~ '^[0-9a-f]*$') NOT VALID;
ALTER TABLE events VALIDATE CONSTRAINT events_stream_id_shape;
ALTER TABLE events VALIDATE CONSTRAINT events_prev_hash_shape;
ALTER TABLE events VALIDATE CONSTRAINT events_hash_shape;
ALTER TABLE events
    DROP CONSTRAINT events_stream_id_check,
    DROP CONSTRAINT events_prev_hash_check,
    DROP CONSTRAINT events_hash_check;
