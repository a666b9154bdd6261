-- Constraint and value errors of INSERT and UPDATE, each with PostgreSQL's SQLSTATE:
-- 23505, 23502, 22001, 22003, 22P02, 22008, 22007, 42804, 42703, 42601, 42P16, 42P07.
CREATE TABLE qa_con (id integer PRIMARY KEY, name text NOT NULL, v varchar(3),
                     n numeric(5,2), s smallint, b boolean, dt date, iv interval,
                     UNIQUE (name, v));
INSERT INTO qa_con VALUES (1, 'a', 'x');
INSERT INTO qa_con VALUES (1, 'dup');
INSERT INTO qa_con VALUES (2, NULL);
INSERT INTO qa_con (id) VALUES (2);
INSERT INTO qa_con VALUES (2, 'a', 'x');
INSERT INTO qa_con VALUES (2, 'a', NULL), (3, 'a', NULL);
INSERT INTO qa_con VALUES (4, 'z', 'abcd');
INSERT INTO qa_con VALUES (4, 'z', NULL, 12345.6);
INSERT INTO qa_con VALUES (4, 'z', NULL, 999.995);
INSERT INTO qa_con (id, name, s) VALUES (4, 'z', 32768);
INSERT INTO qa_con (id, name, s) VALUES (4, 'z', 1.5) RETURNING s;
INSERT INTO qa_con VALUES ('x4', 'z');
INSERT INTO qa_con VALUES (2147483648, 'z');
INSERT INTO qa_con (id, name, b) VALUES (5, 'z', 'maybe');
INSERT INTO qa_con (id, name, b) VALUES (5, 'z', 'yes') RETURNING b;
INSERT INTO qa_con (id, name, dt) VALUES (6, 'z', '2001-02-30');
INSERT INTO qa_con (id, name, iv) VALUES (6, 'z', 'nonsense');
INSERT INTO qa_con (id, name, b) VALUES (6, 'z', 1);
INSERT INTO qa_con (id, name) VALUES (6, 'z', 'extra');
INSERT INTO qa_con (id, name, v) VALUES (6, 'z');
INSERT INTO qa_con (id, nosuch) VALUES (6, 'z');
INSERT INTO qa_con (id, id) VALUES (6, 7);
INSERT INTO nosuch VALUES (1);
UPDATE qa_con SET name = NULL WHERE id = 1;
UPDATE qa_con SET id = 2 WHERE id = 3;
UPDATE qa_con SET n = 1000;
UPDATE qa_con SET nosuch = 1;
UPDATE qa_con SET id = 1, id = 2;
UPDATE qa_con SET s = s + 32767 WHERE id = 5;
UPDATE qa_con SET s = 32767 WHERE id = 4 RETURNING s;
UPDATE qa_con SET s = s + 1 WHERE id = 4;
SELECT id, name, v, n, s, b FROM qa_con ORDER BY id;
CREATE TABLE qa_con (a integer);
CREATE TABLE IF NOT EXISTS qa_con (a integer);
CREATE TABLE qa_con2 (a integer, a text);
CREATE TABLE qa_con2 (a integer PRIMARY KEY, b integer PRIMARY KEY);
CREATE TABLE qa_con2 (a nosuchtype);
DROP TABLE qa_con;
