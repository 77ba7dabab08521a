-- schema.sql - the detm database (SQLite, WAL, foreign keys on).
--
-- This file is embedded into detmd at build time. Each "-- migration N"
-- section runs once, in order, in its own transaction, when the database's
-- PRAGMA user_version is below N; user_version is then set to N. A released
-- section is never edited: changes go into a new section at the end.
--
-- Conventions: ids are 8 lowercase hex digits (TEXT); times are INTEGER
-- milliseconds since the Unix epoch (the API prints them as ISO-8601 UTC);
-- plan-item ordinals are 0-based; input_data/output_data hold JSON text.
-- Deleting a task deletes its whole tree through ON DELETE CASCADE.

-- migration 1
CREATE TABLE tasks (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'paused', 'completed', 'failed', 'cancelled')),
    agent_id    TEXT,
    metadata    TEXT NOT NULL DEFAULT '{}',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX tasks_updated ON tasks (updated_at);
CREATE INDEX tasks_status_updated ON tasks (status, updated_at);

CREATE TABLE plan_items (
    id               TEXT PRIMARY KEY NOT NULL,
    task_id          TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    ordinal          INTEGER NOT NULL CHECK (ordinal >= 0),
    title            TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'active', 'completed', 'failed', 'skipped', 'scrapped')),
    started_at       INTEGER,
    completed_at     INTEGER,
    duration_seconds REAL,
    action_count     INTEGER NOT NULL DEFAULT 0,   -- kept by detmd: summaries stay O(items)
    UNIQUE (task_id, ordinal)
);

CREATE TABLE actions (
    id           TEXT PRIMARY KEY NOT NULL,
    task_id      TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    plan_item_id TEXT REFERENCES plan_items (id) ON DELETE CASCADE,
    action_type  TEXT NOT NULL
                 CHECK (action_type IN ('cli', 'gui', 'wait', 'vision', 'reasoning', 'other')),
    summary      TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'completed'
                 CHECK (status IN ('started', 'completed', 'failed')),
    input_data   TEXT,
    output_data  TEXT,
    duration_ms  REAL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX actions_task_item ON actions (task_id, plan_item_id);
CREATE INDEX actions_item ON actions (plan_item_id);

CREATE TABLE action_logs (
    id          TEXT PRIMARY KEY NOT NULL,
    action_id   TEXT NOT NULL REFERENCES actions (id) ON DELETE CASCADE,
    log_type    TEXT NOT NULL DEFAULT 'info',
    content     TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX action_logs_action ON action_logs (action_id);

CREATE TABLE task_messages (
    id          TEXT PRIMARY KEY NOT NULL,
    task_id     TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    role        TEXT NOT NULL CHECK (role IN ('agent', 'user', 'wait', 'system', 'error')),
    msg_type    TEXT NOT NULL DEFAULT 'text',
    content     TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX task_messages_task ON task_messages (task_id);

-- Smart waits (the wait engine arrives with its own issue; the table is here
-- so a task's delete already cascades to its waits).
CREATE TABLE wait_jobs (
    id            TEXT PRIMARY KEY NOT NULL,
    task_id       TEXT REFERENCES tasks (id) ON DELETE CASCADE,
    target        TEXT NOT NULL,
    criteria      TEXT NOT NULL,
    timeout_s     INTEGER NOT NULL DEFAULT 300,
    poll_hint_s   REAL,
    status        TEXT NOT NULL DEFAULT 'watching'
                  CHECK (status IN ('watching', 'resolved', 'timed_out', 'cancelled', 'failed')),
    verdict       TEXT,
    reason        TEXT,
    evaluations   INTEGER NOT NULL DEFAULT 0,
    skipped       INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    deadline_at   INTEGER NOT NULL,
    last_frame_at INTEGER,
    resolved_at   INTEGER
);
CREATE INDEX wait_jobs_status ON wait_jobs (status);
CREATE INDEX wait_jobs_task ON wait_jobs (task_id);

-- migration 2
-- Smart waits: the task action that records the wait, what the model cost,
-- which backend judged it, and the agent's last note (wait_update message).
ALTER TABLE wait_jobs ADD COLUMN action_id TEXT;
ALTER TABLE wait_jobs ADD COLUMN backend TEXT;
ALTER TABLE wait_jobs ADD COLUMN tokens_in INTEGER NOT NULL DEFAULT 0;
ALTER TABLE wait_jobs ADD COLUMN tokens_out INTEGER NOT NULL DEFAULT 0;
ALTER TABLE wait_jobs ADD COLUMN note TEXT;

-- migration 3
-- Smart waits: the judge a wait asked for (auto | ocr | model), and how it
-- was decided (a JSON object: judged_by, judge_reason, woken_by, wakeups,
-- the model's confidence, summary and evidence).
ALTER TABLE wait_jobs ADD COLUMN judge TEXT;
ALTER TABLE wait_jobs ADD COLUMN verdict_json TEXT;

-- migration 4
-- Usage and cost: one row per model call (wait judging, grounding, the
-- gui_agent supervisor, the OmniParser picker). cost_usd is NULL when the
-- price of the model is not known (never 0 for "unknown"). task_id is not a
-- foreign key: what a deleted task spent stays in the totals.
CREATE TABLE usage_events (
    id            TEXT PRIMARY KEY NOT NULL,
    ts            INTEGER NOT NULL,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    task_id       TEXT,
    purpose       TEXT,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    requests      INTEGER NOT NULL DEFAULT 1,
    cost_usd      REAL,
    latency_ms    REAL,
    outcome       TEXT NOT NULL DEFAULT 'ok',
    http_status   INTEGER
);
CREATE INDEX usage_ts ON usage_events (ts);
CREATE INDEX usage_task ON usage_events (task_id, ts);

-- Budgets: what a task may spend before detmd pauses it. NULL = no limit.
CREATE TABLE task_budgets (
    task_id     TEXT PRIMARY KEY NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    usd         REAL,
    model_calls INTEGER,
    tokens      INTEGER,
    minutes     REAL,
    updated_at  INTEGER NOT NULL
);

-- migration 5
-- rebuild with foreign_keys off
-- Human takeover: the human's input at the dashboard is audited as actions
-- of type 'human'. SQLite cannot change a CHECK constraint in place, so the
-- table is rebuilt by SQLite's 12-step ALTER TABLE procedure: the marker
-- line above makes store.c turn foreign keys off before this section's
-- transaction (with them on, DROP TABLE actions would delete every
-- action_logs row through ON DELETE CASCADE), run PRAGMA foreign_key_check
-- before COMMIT and turn them back on after. rowid is copied with the row:
-- actions are listed in rowid order, and ids and order stay as they were.
-- The human's actions that detmd wrote before this version (type 'other',
-- input actor "human", summary "human: ...") become 'human'.
CREATE TABLE actions_new (
    id           TEXT PRIMARY KEY NOT NULL,
    task_id      TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    plan_item_id TEXT REFERENCES plan_items (id) ON DELETE CASCADE,
    action_type  TEXT NOT NULL
                 CHECK (action_type IN ('cli', 'gui', 'wait', 'vision', 'reasoning', 'other', 'human')),
    summary      TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'completed'
                 CHECK (status IN ('started', 'completed', 'failed')),
    input_data   TEXT,
    output_data  TEXT,
    duration_ms  REAL,
    created_at   INTEGER NOT NULL
);
INSERT INTO actions_new (rowid, id, task_id, plan_item_id, action_type, summary, status,
                         input_data, output_data, duration_ms, created_at)
    SELECT rowid, id, task_id, plan_item_id,
           CASE WHEN action_type = 'other' AND summary LIKE 'human: %'
                 AND (CASE WHEN json_valid(input_data)
                           THEN json_extract(input_data, '$.actor') END) = 'human'
                THEN 'human' ELSE action_type END,
           summary, status, input_data, output_data, duration_ms, created_at FROM actions;
DROP TABLE actions;
ALTER TABLE actions_new RENAME TO actions;
CREATE INDEX actions_task_item ON actions (task_id, plan_item_id);
CREATE INDEX actions_item ON actions (plan_item_id);

-- migration 6
-- edits the schema text
-- The same CHECK constraints, written as OR chains instead of IN lists.
-- SQLite evaluates "x IN (a constant list of more than two)" by building
-- a temporary b-tree of the list every time the constraint runs: on every
-- INSERT into actions that was two of them, about 4 % of detmd's time in a
-- POST storm. An equivalent CHECK changes nothing stored, so the table
-- text is edited in place (https://sqlite.org/lang_altertable.html,
-- "otheralter", the simpler procedure) rather than rebuilt: the marker
-- line above makes store.c bump PRAGMA schema_version in the same
-- transaction. writable_schema = RESET turns editing off and reparses the
-- schema, so a broken edit fails this migration instead of a later open.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (status IN (''active'', ''paused'', ''completed'', ''failed'', ''cancelled''))',
    'CHECK (status = ''active'' OR status = ''paused'' OR status = ''completed'' OR status = ''failed'' OR status = ''cancelled'')')
    WHERE type = 'table' AND name = 'tasks';
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (status IN (''pending'', ''active'', ''completed'', ''failed'', ''skipped'', ''scrapped''))',
    'CHECK (status = ''pending'' OR status = ''active'' OR status = ''completed'' OR status = ''failed'' OR status = ''skipped'' OR status = ''scrapped'')')
    WHERE type = 'table' AND name = 'plan_items';
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (action_type IN (''cli'', ''gui'', ''wait'', ''vision'', ''reasoning'', ''other'', ''human''))',
    'CHECK (action_type = ''cli'' OR action_type = ''gui'' OR action_type = ''wait'' OR action_type = ''vision'' OR action_type = ''reasoning'' OR action_type = ''other'' OR action_type = ''human'')')
    WHERE type = 'table' AND name = 'actions';
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (status IN (''started'', ''completed'', ''failed''))',
    'CHECK (status = ''started'' OR status = ''completed'' OR status = ''failed'')')
    WHERE type = 'table' AND name = 'actions';
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (role IN (''agent'', ''user'', ''wait'', ''system'', ''error''))',
    'CHECK (role = ''agent'' OR role = ''user'' OR role = ''wait'' OR role = ''system'' OR role = ''error'')')
    WHERE type = 'table' AND name = 'task_messages';
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (status IN (''watching'', ''resolved'', ''timed_out'', ''cancelled'', ''failed''))',
    'CHECK (status = ''watching'' OR status = ''resolved'' OR status = ''timed_out'' OR status = ''cancelled'' OR status = ''failed'')')
    WHERE type = 'table' AND name = 'wait_jobs';
PRAGMA writable_schema = RESET;

-- migration 7
-- The latest status of each recording and clip (daemon/recorder_final.c):
-- written when one starts and when it ends, so its final state (failed,
-- and why) outlives a recordings disk too full for its status file.
-- key is the task id or "clip-<id>"; status is the status JSON.
CREATE TABLE recordings (
    key         TEXT PRIMARY KEY NOT NULL,
    task_id     TEXT,
    status      TEXT NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX recordings_task ON recordings (task_id);

-- migration 8
-- Done, checked (issue 38 item 2): the verdict on a task's or an item's
-- completion against the evidence detm holds (daemon/task/completion.c), as
-- JSON {completion: evidenced|unchecked|contradicted, completion_why:
-- {sentence, reasons}, checked_at}; NULL until it is completed.
ALTER TABLE tasks ADD COLUMN completion TEXT;
ALTER TABLE plan_items ADD COLUMN completion TEXT;

-- migration 9
-- Loops (issue 38 item 1): what detm's loop detection noticed on a task
-- (daemon/task/loopdet.c, desktop/loopwatch.c), as JSON {count, signals:
-- {repeat, cycle, noop, item}, last: {signal, what, times, since, at,
-- sentence, ordinal, action_id}, paused_at?}; NULL until the first loop.
ALTER TABLE tasks ADD COLUMN loops TEXT;

-- migration 10
-- Record once, replay (issue 38 item 3). actions.target: what was under an
-- input's point, read after the input by desktop/target.c (the window's
-- title and class, the accessibility element with its path and index among
-- same-role same-name elements, the OCR text around the point) as JSON;
-- NULL for actions without a point or before it is read. tasks.replay: a
-- replay task's progress and result (gui/replay.c) as JSON; NULL for others.
ALTER TABLE actions ADD COLUMN target TEXT;
ALTER TABLE tasks ADD COLUMN replay TEXT;
