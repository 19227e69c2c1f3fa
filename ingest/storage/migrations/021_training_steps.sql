-- 021_training_steps: drafter training logs (issue #31, the training part): loss, accuracy and the simulated accept
-- length per logged step, from SpecForge and NeMo AutoModel consoles (ingest/parsers/training/). Documented in
-- docs/schema.md; the Acceptance page sets the simulated accept length beside the served one of the same variant.
-- `phase`/`variant` are the --phase/--variant labels (the store fills them, `specdash label` changes them).

CREATE TABLE training_steps (
    source_id VARCHAR NOT NULL,
    phase VARCHAR,
    variant VARCHAR,
    line_no BIGINT NOT NULL,
    ts TIMESTAMP,
    epoch INTEGER,
    step BIGINT,
    split VARCHAR NOT NULL,
    position INTEGER,
    loss DOUBLE,
    accuracy DOUBLE,
    acceptance_rate DOUBLE,
    simulated_accept_length DOUBLE,
    learning_rate DOUBLE,
    origin VARCHAR NOT NULL,
    extra VARCHAR
);
