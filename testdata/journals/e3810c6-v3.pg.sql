--
-- PostgreSQL database dump
--

\restrict naxrZfaXbO2botrIoiqDnwOtjdIZMuSBqtYrh7igzgTRaPAHCrL2SDGSdWaxzE7

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
    fence bigint DEFAULT 0 NOT NULL,
    sent boolean DEFAULT true NOT NULL,
    settle_reason text DEFAULT ''::text NOT NULL,
    summary text DEFAULT ''::text NOT NULL,
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

INSERT INTO payonce_golden.payonce_journal VALUES ('a55:golden-a55-client@https://sandbox.api.a55.tech', 'order-1/attempt-1', 'charges.create', 'POST', '/api/v1/bank/wallet/charge/', '9d1eb52a-4713-4544-a1a2-047b894bafef', '2026-12-07 18:02:57.717123+00', 'hmac-sha256:b784892efcdbd18c1424290f40f3fbce0462c406c95eac1601d1423bc54daa94', 'succeeded', '\x7b22616d6f756e74223a223130302e3030222c2263617074757265223a747275652c2263617074757265645f616d6f756e74223a223130302e3030222c2263617264223a7b2265787069726174696f6e5f6d6f6e7468223a223132222c2265787069726174696f6e5f79656172223a2232303330222c22686f6c6465725f6e616d65223a22474f4c44454e2054455354222c226c61737434223a2233313930227d2c226368617267655f75756964223a2264393866323966612d636265342d346665632d616230302d643362353063626432303362222c22637265617465645f6174223a22323032362d31312d33305431323a30313a30305a222c2263757272656e6379223a2242524c222c226465736372697074696f6e223a22676f6c64656e206f726465722d31222c226964656d706f74656e63795f6b6579223a2239643165623532612d343731332d343534342d613161322d303437623839346261666566222c226d657373616765223a5b5d2c22726566756e6465645f616d6f756e74223a22302e3030222c22737461747573223a22636f6e6669726d6564222c22747970655f636861726765223a226372656469745f63617264222c22757064617465645f6174223a22323032362d31312d33305431323a30313a30305a222c2277616c6c65745f75756964223a2238323335616531382d313136302d346136342d623661362d363162376531613037613566227d', 200, 'req_48f78c0705d11579752401f7', false, '', '', '', 1, '', '2026-12-07 18:02:57.718032+00', '2026-12-07 18:02:57.721593+00', '', NULL, 1, true, '', '{"amount":"100.00","currency":"BRL","description":"golden order-1","type_charge":"credit_card"}');
INSERT INTO payonce_golden.payonce_journal VALUES ('a55:golden-a55-client@https://sandbox.api.a55.tech', 'order-2/attempt-1', 'charges.create', 'POST', '/api/v1/bank/wallet/charge/', 'b5417c4d-18cb-4d64-94c5-d21f70643e99', '2026-12-07 18:02:57.722061+00', 'hmac-sha256:1d247de25c26efd586e2bbc935a6736204b4023581c14bbba632f7f8fa0df7d3', 'pending', NULL, 0, '', false, 'retries_exhausted', '', '', 5, 'retries exhausted (transport)', '2026-12-07 18:02:57.724361+00', '2026-12-07 18:02:57.746039+00', '', NULL, 1, true, '', '{"amount":"250.00","currency":"BRL","description":"golden order-2","type_charge":"credit_card"}');
INSERT INTO payonce_golden.payonce_journal VALUES ('a55:golden-a55-client@https://sandbox.api.a55.tech', 'order-3/attempt-1', 'charges.create', 'POST', '/api/v1/bank/wallet/charge/', '9b840f1e-2c63-4157-8416-54604c73b92c', '2026-12-07 18:02:57.745892+00', 'hmac-sha256:8b2e3b7cf7fb84d19c87400df4904b0f213a8ba592f79bc96ffe372ef80fdd3b', 'failed', '\x7b226368617267655f75756964223a2262613633636230642d326665322d346361332d386630342d656636393137333432323533222c226d657373616765223a5b7b22636f6465223a223035222c226465736372697074696f6e223a226e6f7420617574686f72697a6564222c22736f75726365223a2263617264227d5d2c22737461747573223a226572726f72227d', 400, 'req_c886247b83f9d328bc454cfc', false, 'card_declined', '05', 'not authorized', 1, '', '2026-12-07 18:02:57.746665+00', '2026-12-07 18:02:57.747784+00', '', NULL, 1, true, '', '{"amount":"75.00","currency":"BRL","description":"golden order-3","type_charge":"credit_card"}');
INSERT INTO payonce_golden.payonce_journal VALUES ('coinepay:100a565f67f00c9168e4a9bc993b3a39@https://openapi.coinepay.example', 'job-1/apply', 'cards.apply', 'POST', '/api/v1/openapi/card/apply', 'ea03f06c-eb61-4198-a17d-21349a7f0b3b', '2026-12-07 18:02:57.748541+00', 'hmac-sha256:2beca908d2fbfc8465cc7268ad177adc76046946bae8b8d5b9b2bec4179b6701', 'succeeded', '\x7b22636f6465223a3230302c2264617461223a7b226163636f756e745f62616c616e6365223a223939392e3030222c2262616c616e6365223a22302e3030222c22636172645f6964223a22636172645f356236363133323566313938343766313836336137306465222c22637265617465645f6174223a22323032362d31312d33305431323a30343a30305a222c2263757272656e6379223a22555344222c22666565223a22312e3030222c226865616465725f6964223a226864725f31222c227061636b6167655f6964223a22706b675f6261736963222c22737461747573223a22616374697665227d2c226d657373616765223a22e68890e58a9f222c226d6573736167655f6b6579223a2273756363657373227d', 200, '', false, '', '', '', 1, '', '2026-12-07 18:02:57.748692+00', '2026-12-07 18:02:57.749972+00', '', NULL, 1, true, '', '');
INSERT INTO payonce_golden.payonce_journal VALUES ('coinepay:100a565f67f00c9168e4a9bc993b3a39@https://openapi.coinepay.example', 'job-2/apply', 'cards.apply', 'POST', '/api/v1/openapi/card/apply', '65773afe-9031-4f82-8716-63c75c04b3c2', '2026-12-07 18:02:57.749951+00', 'hmac-sha256:a7884d53021ed539c986cfd7b4c11be7eb17d3915e618c160368d376862a7a3f', 'pending', NULL, 0, '', false, 'retries_exhausted', '', '', 5, 'retries exhausted (transport)', '2026-12-07 18:02:57.750435+00', '2026-12-07 18:02:57.768857+00', '', NULL, 1, true, '', '');


--
-- Data for Name: payonce_journal_migrations; Type: TABLE DATA; Schema: payonce_golden; Owner: -
--

INSERT INTO payonce_golden.payonce_journal_migrations VALUES (1, '2026-12-07 18:02:57.692087+00');
INSERT INTO payonce_golden.payonce_journal_migrations VALUES (2, '2026-12-07 18:02:57.692087+00');
INSERT INTO payonce_golden.payonce_journal_migrations VALUES (3, '2026-12-07 18:02:57.692087+00');


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

\unrestrict naxrZfaXbO2botrIoiqDnwOtjdIZMuSBqtYrh7igzgTRaPAHCrL2SDGSdWaxzE7

