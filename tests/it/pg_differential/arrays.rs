//! Array comparisons of the PostgreSQL differential (issue 30): arrays compare element
//! by element with the element type's comparison (`{2} < {10}` for integers), NULL
//! elements equal to each other and above any value, then by length, in every place
//! PostgreSQL compares them: the comparison operators, IS DISTINCT FROM, IN, CASE,
//! ANY/ALL over a subquery, containment, the search functions, ORDER BY, DISTINCT,
//! GROUP BY, set operations, min/max and joins; arrays of two types do not compare
//! (42883).

/// The queries, each run by both servers.
const ARRAY_COMPARISONS: &[&str] = &[
    // Operators
    "SELECT ARRAY[2] < ARRAY[10], ARRAY[10] >= ARRAY[9, 9], ARRAY[1.0] = ARRAY[1.00], ARRAY[2.50] <= ARRAY[2.5], ARRAY['b'] > ARRAY['a', 'z'], ARRAY[1.5::float8] > ARRAY['NaN'::float8]",
    "SELECT ARRAY[1, NULL] = ARRAY[1, NULL], ARRAY[NULL::int] < ARRAY[1], ARRAY[NULL::int] > ARRAY[1], ARRAY[]::int[] < ARRAY[NULL::int], ARRAY[1, 2] >= ARRAY[1], ARRAY[]::int[] = '{}'",
    "SELECT ARRAY[1] = NULL::int[], NULL::int[] < ARRAY[1], ARRAY[1] <> NULL, ARRAY[1, 2] = '{1,2}', '{10}' > ARRAY[9], ARRAY['a b'] = '{\"a b\"}', ARRAY[1.0] = '{1}'",
    "SELECT ARRAY[interval '1 day'] = ARRAY[interval '24 hours'], ARRAY[interval '1 mon'] < ARRAY[interval '31 days'], ARRAY[date '2001-01-02'] > ARRAY[date '2001-01-10'], ARRAY[true] > ARRAY[false]",
    "SELECT ARRAY['a'::char(3)] = ARRAY['a  '::char(3)], ARRAY['a'::varchar] < ARRAY['b'::varchar], ARRAY[-0.0::float8] = ARRAY[0.0::float8]",
    "SELECT id, ARRAY[k] < ARRAY[id], ARRAY[k, id] = ARRAY[id, k], ARRAY[n] > ARRAY[1.5], ARRAY[d] <= ARRAY[1e3::float8], ARRAY[t] < ARRAY['b'], ARRAY[iv] >= ARRAY[interval '1 day'] FROM ta ORDER BY id",
    "SELECT id FROM ta WHERE NOT (ARRAY[k] < ARRAY[2]) OR ARRAY[k] = ARRAY[7] ORDER BY id",
    "SELECT id, ARRAY[k] < ARRAY[2] OR ARRAY[s] > ARRAY[1::smallint], ARRAY[k] > ARRAY[10] AND id > 1 FROM ta ORDER BY id",
    // IS DISTINCT FROM, IN, CASE, NULLIF, GREATEST
    "SELECT ARRAY['b'] IS DISTINCT FROM ARRAY['b'], ARRAY[1.0] IS NOT DISTINCT FROM ARRAY[1], ARRAY[1] IS DISTINCT FROM NULL, NULL::int[] IS DISTINCT FROM NULL::int[], ARRAY[NULL::int] IS NOT DISTINCT FROM ARRAY[NULL::int]",
    "SELECT id, ARRAY[k] IS DISTINCT FROM ARRAY[1], ARRAY[n] IS NOT DISTINCT FROM ARRAY[2.50] FROM ta ORDER BY id",
    "SELECT id, ARRAY[k] IN (ARRAY[1], ARRAY[3]), ARRAY[k] NOT IN (ARRAY[2]), ARRAY[n] IN (ARRAY[1.250], NULL) FROM ta ORDER BY id",
    "SELECT CASE ARRAY[1.0] WHEN ARRAY[1] THEN 'y' ELSE 'n' END, CASE WHEN ARRAY[2] < ARRAY[10] THEN 'lt' END",
    // ANY/ALL over a subquery of arrays
    "SELECT id FROM ta WHERE ARRAY[k] = ANY (SELECT ARRAY[x] FROM one) ORDER BY id",
    "SELECT id, ARRAY[k] IN (SELECT ARRAY[tb.k] FROM tb), ARRAY[k] < ALL (SELECT ARRAY[10]), ARRAY[n] NOT IN (SELECT ARRAY[2.50]) FROM ta ORDER BY id",
    // Containment and the search functions
    "SELECT ARRAY[1.0, 2] @> ARRAY[2.00], ARRAY[1.5] <@ ARRAY[1.50, 3], ARRAY[1.5] && ARRAY[1.50], ARRAY[interval '1 day'] @> ARRAY[interval '24 hours'], ARRAY['a'::char(3)] <@ ARRAY['a  '::char(3)]",
    "SELECT ARRAY[1, NULL] @> ARRAY[NULL::int], ARRAY[NULL::int] && ARRAY[NULL::int], ARRAY[]::int[] <@ ARRAY[]::int[], ARRAY[1] @> NULL, NULL::int[] && ARRAY[1]",
    "SELECT id, ARRAY[n] <@ ARRAY[1.250, 2.5], ARRAY[d] && ARRAY[0::float8, 1] FROM ta ORDER BY id",
    "SELECT array_position(ARRAY[1.0, 2.0], 2), array_positions(ARRAY[1.5, 1.50, NULL], 1.5), array_remove(ARRAY[1.0, 2.0], 1), array_replace(ARRAY[1.0, NULL], 1, 9)",
    "SELECT array_position(ARRAY['a  '::char(3)], 'a'), array_position(ARRAY[interval '1 day'], interval '24 hours'), array_positions(ARRAY[-0.0::float8, 0], 0), array_remove(ARRAY[2, 10, 2], 2)",
    "SELECT id, array_position(ARRAY[1.25, 2.50, 0], n), array_remove(ARRAY[0.0::float8, 1, 2.5], d) FROM ta ORDER BY id",
    // ORDER BY, DISTINCT, GROUP BY, set operations
    "SELECT id, ARRAY[k, id] FROM ta ORDER BY ARRAY[k, id]",
    "SELECT ARRAY[d] AS a FROM ta ORDER BY a DESC, id",
    "SELECT ARRAY[n], id FROM ta ORDER BY 1 NULLS FIRST, 2",
    "SELECT a FROM (VALUES (ARRAY[10]), (ARRAY[9]), (ARRAY[100, 1]), (ARRAY[NULL::int]), (ARRAY[]::int[]), (NULL)) v(a) ORDER BY a",
    "SELECT DISTINCT ARRAY[k] FROM ta ORDER BY 1",
    "SELECT DISTINCT a FROM (VALUES (ARRAY[1.0]), (ARRAY[1.00]), (ARRAY[2]), (ARRAY[2.0])) v(a) ORDER BY a",
    "SELECT DISTINCT ON (ARRAY[k]) ARRAY[k], id FROM ta ORDER BY ARRAY[k], id",
    "SELECT a, count(*) FROM (VALUES (ARRAY[1.0]), (ARRAY[1.00]), (ARRAY[2]), (ARRAY[NULL::numeric]), (ARRAY[NULL::numeric])) v(a) GROUP BY a ORDER BY a",
    "SELECT ARRAY[k % 2], count(*), min(id) FROM ta GROUP BY 1 ORDER BY 1",
    "SELECT ARRAY[1.0] UNION SELECT ARRAY[1.00] ORDER BY 1",
    "SELECT a FROM (VALUES (ARRAY[2]), (ARRAY[10])) v(a) UNION SELECT ARRAY[9] ORDER BY 1",
    "SELECT ARRAY[2.0] INTERSECT SELECT ARRAY[2]::numeric[]",
    "SELECT ARRAY[k] FROM ta EXCEPT SELECT ARRAY[1] ORDER BY 1",
    // Window and aggregate keys
    "SELECT k, rank() OVER (ORDER BY ARRAY[k]), count(*) OVER (PARTITION BY ARRAY[k * 1.0]) FROM (VALUES (2), (10), (2.0)) v(k) ORDER BY 1, 2",
    "SELECT id, row_number() OVER (PARTITION BY ARRAY[k] ORDER BY ARRAY[d] DESC, id) FROM ta ORDER BY id",
    "SELECT string_agg(k::text, ',' ORDER BY ARRAY[k]), string_agg(k::text, ',' ORDER BY ARRAY[k] DESC) FROM (VALUES (2), (10), (9)) v(k)",
    "SELECT count(DISTINCT ARRAY[k]), count(DISTINCT ARRAY[k::text]) FROM (VALUES (2.0), (2.00), (9)) v(k)",
    // GREATEST, LEAST, NULLIF
    "SELECT greatest(ARRAY[2], ARRAY[10]), least(ARRAY[2], ARRAY[10]), nullif(ARRAY[1.0], ARRAY[1.00]), nullif(ARRAY[2], ARRAY[10])",
    "SELECT greatest(ARRAY[1], NULL, '{5}'), least(NULL::int[], NULL), nullif(ARRAY[1], '{1}'), nullif(NULL::int[], ARRAY[1]), pg_typeof(greatest(ARRAY[1], NULL))",
    "SELECT greatest(ARRAY[1], ARRAY[1.5]), pg_typeof(greatest(ARRAY[1], ARRAY[1.5], ARRAY[2::float8])), least(ARRAY[2::float8], ARRAY[10])",
    "SELECT id, greatest(ARRAY[k], ARRAY[id]), least(ARRAY[t], ARRAY[v]) FROM ta ORDER BY id",
    "SELECT nullif(ARRAY[1], ARRAY[1.5])",
    "SELECT greatest(ARRAY[1], ARRAY['a'::text])",
    // min/max, joins
    "SELECT min(ARRAY[k]), max(ARRAY[k]), min(ARRAY[t]), max(ARRAY[d, r]), min(ARRAY[iv]), max(ARRAY[n]) FROM ta",
    "SELECT k, max(ARRAY[id]), min(ARRAY[d]) FROM ta GROUP BY k ORDER BY k",
    "SELECT ta.id, tb.id FROM ta JOIN tb ON ARRAY[ta.k] = ARRAY[tb.k] ORDER BY 1, 2",
    "SELECT x.a, y.a FROM (VALUES (ARRAY[1.0]), (ARRAY[2])) x(a) JOIN (VALUES (ARRAY[1]::numeric[]), (ARRAY[2.00])) y(a) ON x.a = y.a ORDER BY 1",
    "SELECT x.a, y.b FROM (VALUES (ARRAY[1.0])) x(a) LEFT JOIN (VALUES (ARRAY[1.00], 'y')) y(a, b) USING (a)",
    // Errors: arrays of two types, an array and a value, a malformed literal
    "SELECT ARRAY[1.0] = ARRAY[1]",
    "SELECT ARRAY[1] < ARRAY[1]::bigint[]",
    "SELECT ARRAY['a'::varchar] = ARRAY['a'::text]",
    "SELECT ARRAY[1] = 1",
    "SELECT ARRAY[1.0] @> ARRAY[1]",
    "SELECT ARRAY[1] && ARRAY['a'::text]",
    "SELECT ARRAY[1] < '{x}'",
    "SELECT ARRAY[1] IS DISTINCT FROM ARRAY['a'::text]",
];

/// Arrays of several dimensions: built, printed, subscripted, measured and unnested.
const MULTIDIMENSIONAL: &[&str] = &[
    "SELECT ARRAY[ARRAY[1, 2], ARRAY[3, 4]], ARRAY[ARRAY['a', NULL], ARRAY['b c', 'd']], pg_typeof(ARRAY[ARRAY[1]]), ARRAY[ARRAY[ARRAY[1], ARRAY[2]]]",
    "SELECT (ARRAY[ARRAY[1, 2], ARRAY[3, 4]])[2][1], (ARRAY[ARRAY[1, 2], ARRAY[3, 4]])[1], (ARRAY[ARRAY[1, 2], ARRAY[3, 4]])[3][1], (ARRAY[ARRAY[1, 2], ARRAY[3, 4]])[1][NULL]",
    "SELECT array_dims(ARRAY[ARRAY[1, 2, 3], ARRAY[4, 5, 6]]), array_ndims(ARRAY[ARRAY[1]]), array_length(ARRAY[ARRAY[1, 2, 3], ARRAY[4, 5, 6]], 2), array_length(ARRAY[ARRAY[1, 2, 3]], 3), cardinality(ARRAY[ARRAY[1, 2, 3], ARRAY[4, 5, 6]]), array_upper(ARRAY[ARRAY[1, 2, 3]], 2), array_lower(ARRAY[ARRAY[1, 2]], 2)",
    "SELECT ARRAY[ARRAY[]::int[], ARRAY[]::int[]], ARRAY[NULL::int[], NULL::int[]], '{{1,2},{3,4}}'::int[], '{{a,\"b c\"}}'::text[], array_dims('{{1},{2}}'::int[])",
    "SELECT unnest(ARRAY[ARRAY['a', 'b'], ARRAY['c', 'd']])",
    "SELECT x FROM unnest(ARRAY[ARRAY[1, 2], ARRAY[3, NULL]]) AS u(x)",
    "SELECT id, ARRAY[ARRAY[k, id], ARRAY[s, big]] FROM ta ORDER BY id",
    "SELECT ARRAY[ARRAY[1, 2], ARRAY[3, 4]] < ARRAY[ARRAY[1, 2], ARRAY[3, 5]], ARRAY[ARRAY[1, 2], ARRAY[3, 4]] = ARRAY[1, 2, 3, 4], ARRAY[ARRAY[1, 2], ARRAY[3, 4]] > ARRAY[1, 2, 3, 4], ARRAY[ARRAY[1.0]] = ARRAY[ARRAY[1.00]], ARRAY[ARRAY[1, 2]] < ARRAY[ARRAY[1], ARRAY[2]]",
    "SELECT a, count(*) FROM (VALUES (ARRAY[ARRAY[1.0, 2]]), (ARRAY[ARRAY[1, 2.00]]), (ARRAY[1, 2]), (ARRAY[ARRAY[1], ARRAY[2]])) v(a) GROUP BY a ORDER BY a",
    "SELECT ARRAY[ARRAY[1], ARRAY[2, 3]]",
    "SELECT ARRAY[ARRAY[1, 2], NULL]",
    "SELECT '{{1},{2,3}}'::int[]",
    "SELECT '{{1},2}'::int[]",
    // ANY/ALL over a multidimensional array compare with its scalars: an array operand
    // meets no operator (42883), whichever comparison and plan builder
    "SELECT 1 = ANY(ARRAY[ARRAY[1, 2], ARRAY[3, 4]]), 3 = ALL(ARRAY[ARRAY[3], ARRAY[3]]), 1.5 < ANY(ARRAY[ARRAY[1], ARRAY[2]]), 'x' = ANY(ARRAY[ARRAY['x', 'y']]), 5 <> ALL((ARRAY[ARRAY[1, NULL]]))",
    "SELECT id, k = ANY(ARRAY[ARRAY[1, 3], ARRAY[id, 7]]), k < ALL(ARRAY[ARRAY[id + 5]]) FROM ta ORDER BY id",
    "SELECT ARRAY[1] = ANY(ARRAY[ARRAY[1]])",
    "SELECT ARRAY[1] <> ALL(ARRAY[ARRAY[1]])",
    "SELECT ARRAY[1.5] < ANY(ARRAY[ARRAY[1]])",
    "SELECT ARRAY['a'] >= ALL(ARRAY[ARRAY['b']])",
    "SELECT ARRAY[1] = ANY(ARRAY[1])",
    "SELECT id FROM ta WHERE ARRAY[k] = ANY(ARRAY[ARRAY[k]])",
    "SELECT 1 = ANY(ARRAY[ARRAY[1], 2])",
    "SELECT 1 = ANY(ARRAY[2, ARRAY[1]])",
    "SELECT 1 = ANY(ARRAY[ARRAY[1], ARRAY[2, 3]])",
    "SELECT 1 = ANY(ARRAY[ARRAY[NULL]])",
    "SELECT 1 = ANY(ARRAY[ARRAY[]])",
    // ... and over an array value, the operator between the operand and the elements
    "SELECT 1 = ANY('{1,2}'::int[]), 1.5 = ANY('{1,2}'::int[]), 10 > ANY('{9}'::int[]), 'b' > ANY('{a}'::text[]), '1' = ANY('{1}'::int[]), 1 <> ALL('{1,2}'::int[]), 1 = ANY(NULL::int[])",
    "SELECT ARRAY[1] = ANY('{1}'::int[])",
    "SELECT ARRAY[1] = ANY('{{1}}'::int[])",
    "SELECT ARRAY[1] = ALL('{}'::int[])",
    "SELECT 'a' = ANY('{1}'::int[])",
    "SELECT 10 > ANY('{9}'::text[])",
    "SELECT 1 = ANY('{1}'::text[])",
    "SELECT now() = ANY('{1}'::int[])",
    "SELECT 1 = ANY(1)",
    "SELECT id FROM ta WHERE ARRAY[k] = ANY(ARRAY[1, 2] || 3)",
];

/// The array comparison queries.
pub fn listed(out: &mut Vec<String>) {
    out.extend(ARRAY_COMPARISONS.iter().map(|q| q.to_string()));
    out.extend(MULTIDIMENSIONAL.iter().map(|q| q.to_string()));
}
