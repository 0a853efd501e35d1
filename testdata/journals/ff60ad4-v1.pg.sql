--
-- PostgreSQL database dump
--

\restrict NaCxMlvP1l1Sa2WpY5fcjKUcrE74KaxbxiMdbNzMeEl41BEBjJp46d1oxRuwyaR

-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: payonce_golden; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA payonce_golden;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: payonce_journal; Type: TABLE; Schema: payonce_golden; Owner: -
--

CREATE TABLE payonce_golden.payonce_journal (
    scope text NOT NULL,
    reference text NOT NULL,
    operation text DEFAULT ''::text NOT NULL,
    method text DEFAULT ''::text NOT NULL,
    path text DEFAULT ''::text NOT NULL,
    idem_key text NOT NULL,
    key_created timestamp with time zone NOT NULL,
    fingerprint text NOT NULL,
    state text NOT NULL,
    result bytea,
    status_code integer DEFAULT 0 NOT NULL,
    request_id text DEFAULT ''::text NOT NULL,
    replayed boolean DEFAULT false NOT NULL,
    error_kind text DEFAULT ''::text NOT NULL,
    error_code text DEFAULT ''::text NOT NULL,
    error_message text DEFAULT ''::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_cause text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    lease_owner text DEFAULT ''::text NOT NULL,
    lease_until timestamp with time zone,
    CONSTRAINT payonce_journal_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'succeeded'::text, 'failed'::text])))
);


--
-- Name: payonce_journal_migrations; Type: TABLE; Schema: payonce_golden; Owner: -
--

CREATE TABLE payonce_golden.payonce_journal_migrations (
    version integer NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Data for Name: payonce_journal; Type: TABLE DATA; Schema: payonce_golden; Owner: -
--

INSERT INTO payonce_golden.payonce_journal VALUES ('a55:golden-a55-client@https://sandbox.api.a55.tech', 'order-1/attempt-1', 'charges.create', 'POST', '/api/v1/bank/wallet/charge/', 'a77b980e-3360-4319-bda8-ffd119fd5f2b', '2026-11-30 12:01:00+00', '8dd890021039cf2330bdb1441f5fb93a71fcb771bb162fe59c77dff067c23dff', 'succeeded', '\x7b22616d6f756e74223a223130302e3030222c2263617074757265223a747275652c2263617074757265645f616d6f756e74223a223130302e3030222c2263617264223a7b2265787069726174696f6e5f6d6f6e7468223a223132222c2265787069726174696f6e5f79656172223a2232303330222c22686f6c6465725f6e616d65223a22474f4c44454e2054455354222c226c61737434223a2233313930227d2c226368617267655f75756964223a2265323564663934612d303233642d346266362d393435642d353936383766326234653637222c22637265617465645f6174223a22323032362d31312d33305431323a30313a30305a222c2263757272656e6379223a2242524c222c226465736372697074696f6e223a22676f6c64656e206f726465722d31222c226964656d706f74656e63795f6b6579223a2261373762393830652d333336302d343331392d626461382d666664313139666435663262222c226d657373616765223a5b5d2c22726566756e6465645f616d6f756e74223a22302e3030222c22737461747573223a22636f6e6669726d6564222c22747970655f636861726765223a226372656469745f63617264222c22757064617465645f6174223a22323032362d31312d33305431323a30313a30305a222c2277616c6c65745f75756964223a2232353737316531352d656166662d346439302d393131662d303865633062333763303137227d', 200, 'req_c1e3ed9cc0281c84ce41f14f', false, '', '', '', 1, '', '2026-11-30 12:01:00+00', '2026-11-30 12:01:00+00', '', NULL);
INSERT INTO payonce_golden.payonce_journal VALUES ('a55:golden-a55-client@https://sandbox.api.a55.tech', 'order-2/attempt-1', 'charges.create', 'POST', '/api/v1/bank/wallet/charge/', '23234fce-2972-470a-a9d8-20abfc23da42', '2026-11-30 12:02:00+00', 'acceede486944decd51a003b6afb58536b0cfcd7db3279343e343b81bb9c2062', 'pending', NULL, 0, '', false, 'retries_exhausted', '', '', 5, 'retries exhausted (transport)', '2026-11-30 12:02:00+00', '2026-11-30 12:02:00+00', '', NULL);
INSERT INTO payonce_golden.payonce_journal VALUES ('a55:golden-a55-client@https://sandbox.api.a55.tech', 'order-3/attempt-1', 'charges.create', 'POST', '/api/v1/bank/wallet/charge/', 'ea37039d-3018-43c0-8d5a-41e50e9e1e61', '2026-11-30 12:03:00+00', '75f19120ccc0b55ee6fd08cf37d74e594a362de2a2a38b268a60117742c85c63', 'failed', '\x7b226368617267655f75756964223a2265363038326238642d316463302d346266302d623538302d336166393061343338633132222c226d657373616765223a5b7b22636f6465223a223035222c226465736372697074696f6e223a226e6f7420617574686f72697a6564222c22736f75726365223a2263617264227d5d2c22737461747573223a226572726f72227d', 400, 'req_af243f778a4df5331b3bc69e', false, 'card_declined', '05', 'not authorized', 1, '', '2026-11-30 12:03:00+00', '2026-11-30 12:03:00+00', '', NULL);
INSERT INTO payonce_golden.payonce_journal VALUES ('coinepay:100a565f67f00c9168e4a9bc993b3a39@https://openapi.coinepay.example', 'job-1/apply', 'cards.apply', 'POST', '/api/v1/openapi/card/apply', 'd88d3bcc-a5cc-407a-87ee-cfa55476ab6b', '2026-11-30 12:04:00+00', '21e9092ccfd213f4f71c7f8d3abb4e563acff738465d4cb426d0808415d18b73', 'succeeded', '\x7b22636f6465223a3230302c2264617461223a7b226163636f756e745f62616c616e6365223a223939392e3030222c2262616c616e6365223a22302e3030222c22636172645f6964223a22636172645f393131613835336337373134386331616138653363613661222c22637265617465645f6174223a22323032362d31312d33305431323a30343a30305a222c2263757272656e6379223a22555344222c22666565223a22312e3030222c226865616465725f6964223a226864725f31222c227061636b6167655f6964223a22706b675f6261736963222c22737461747573223a22616374697665227d2c226d657373616765223a22e68890e58a9f222c226d6573736167655f6b6579223a2273756363657373227d', 200, '', false, '', '', '', 1, '', '2026-11-30 12:04:00+00', '2026-11-30 12:04:00+00', '', NULL);
INSERT INTO payonce_golden.payonce_journal VALUES ('coinepay:100a565f67f00c9168e4a9bc993b3a39@https://openapi.coinepay.example', 'job-2/apply', 'cards.apply', 'POST', '/api/v1/openapi/card/apply', '0900eb13-7be4-419c-8658-42f1a77c19a0', '2026-11-30 12:05:00+00', 'ece22873a5122649c39e1829a052156ba837c2f71a4d13a6b29e90cc9c5d3568', 'pending', NULL, 0, '', false, 'retries_exhausted', '', '', 5, 'retries exhausted (transport)', '2026-11-30 12:05:00+00', '2026-11-30 12:05:00+00', '', NULL);


--
-- Data for Name: payonce_journal_migrations; Type: TABLE DATA; Schema: payonce_golden; Owner: -
--

INSERT INTO payonce_golden.payonce_journal_migrations VALUES (1, '2026-12-07 18:02:24.990312+00');


--
-- Name: payonce_journal_migrations payonce_journal_migrations_pkey; Type: CONSTRAINT; Schema: payonce_golden; Owner: -
--

ALTER TABLE ONLY payonce_golden.payonce_journal_migrations
    ADD CONSTRAINT payonce_journal_migrations_pkey PRIMARY KEY (version);


--
-- Name: payonce_journal payonce_journal_pkey; Type: CONSTRAINT; Schema: payonce_golden; Owner: -
--

ALTER TABLE ONLY payonce_golden.payonce_journal
    ADD CONSTRAINT payonce_journal_pkey PRIMARY KEY (scope, reference);


--
-- Name: payonce_journal_created_at_idx; Type: INDEX; Schema: payonce_golden; Owner: -
--

CREATE INDEX payonce_journal_created_at_idx ON payonce_golden.payonce_journal USING btree (created_at) WHERE (state = 'pending'::text);


--
-- Name: payonce_journal_updated_at_idx; Type: INDEX; Schema: payonce_golden; Owner: -
--

CREATE INDEX payonce_journal_updated_at_idx ON payonce_golden.payonce_journal USING btree (updated_at) WHERE (state <> 'pending'::text);


--
-- PostgreSQL database dump complete
--

\unrestrict NaCxMlvP1l1Sa2WpY5fcjKUcrE74KaxbxiMdbNzMeEl41BEBjJp46d1oxRuwyaR

