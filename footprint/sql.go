package footprint

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SQL reads one statement of a lock, with the values of its parameters
// ($1…, or ? in order) when the caller knows them: a statement the server
// sees with its values inlined (PDO's emulated prepares, psql, the mysql
// client) needs none. It learns:
//
//   - GET_LOCK(name, t): Session, key name;
//   - pg_advisory_lock, pg_try_advisory_lock, their _xact_ and _shared
//     forms (k), (k1, k2) or (hashtext('x')): Session, key the argument as
//     written;
//   - SELECT … FOR UPDATE / FOR NO KEY UPDATE / FOR SHARE: Session (an
//     open transaction's row lock), key the value of its name column in
//     WHERE when told;
//   - INSERT, REPLACE or UPDATE of a row with an expiry column (one whose
//     name says so, expires_at, lock_until, key_expiration …, or whose
//     value is now plus an interval): Data, key the value of its name
//     column (name, key_id, lock_name …), and the lease when the expiry is
//     now plus a constant: NOW() + INTERVAL n SECOND, DATE_ADD,
//     TIMESTAMPADD, now() + interval 'n seconds', UNIX_TIMESTAMP() + n,
//     CAST(EXTRACT(epoch FROM NOW()) AS INT) + n. An expiry given as a
//     time (expires_at = '2026-…' or a parameter) has no lease: the
//     program's clock made it.
//
// Anything else (a SELECT without a lock, a DELETE, RELEASE_LOCK,
// pg_advisory_unlock, COMMIT) shows nothing.
func SQL(query string, params []string) (Footprint, bool) {
	for _, q := range statements(bind(query, params)) {
		if f, ok := statement(q); ok {
			return f, true
		}
	}
	return Footprint{}, false
}

// statement reads one statement, q, its words separated by one space.
func statement(q string) (Footprint, bool) {
	from := short(strings.Fields(q)...)
	if m := sessionLock.FindStringSubmatchIndex(q); m != nil {
		args, key := luaArgs(q[m[1]:]), ""
		for i, a := range args {
			if placeholder.MatchString(a) || a == "" {
				key = "" // a name the caller did not bind
				break
			}
			if i > 0 {
				key += ","
			}
			if strings.EqualFold(q[m[2]:m[3]], "get_lock") {
				key += literal(a)
				break // its second argument is the time to wait
			}
			key += strings.ReplaceAll(a, " ", "")
		}
		return took(key, Session, 0, from), true
	}
	verb := strings.ToLower(firstWord(q))
	switch {
	case verb == "select" && forUpdate.MatchString(q):
		return took(whereKey(q), Session, 0, from), true
	case verb == "insert" || verb == "replace" || verb == "upsert":
		return rowWrite(insertPairs(q), q, from)
	case verb == "update":
		return rowWrite(updatePairs(q), q, from)
	}
	return Footprint{}, false
}

// statements splits query at its semicolons, its comments left out and
// its words separated by one space, quotes kept whole.
func statements(query string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if q := strings.Join(strings.Fields(b.String()), " "); q != "" {
			out = append(out, q)
		}
		b.Reset()
	}
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				end = len(query)
			} else {
				end += i + 2
			}
			b.WriteString(query[i:end])
			i = end - 1
		case strings.HasPrefix(query[i:], "--"):
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			i += j
			b.WriteByte(' ')
		case strings.HasPrefix(query[i:], "/*"):
			j := strings.Index(query[i:], "*/")
			if j < 0 {
				j = len(query) - i
			}
			i += j + 1
			b.WriteByte(' ')
		case c == ';':
			flush()
		default:
			b.WriteByte(c)
		}
	}
	flush()
	return out
}

var (
	// sessionLock is a call of a function that takes a lock the server
	// frees with the session (or transaction).
	sessionLock = regexp.MustCompile(`(?i)\b(get_lock|pg_(?:try_)?advisory_(?:xact_)?lock(?:_shared)?)\s*\(`)
	forUpdate   = regexp.MustCompile(`(?i)\bfor\s+(?:no\s+key\s+)?(?:update|share)\b|\block\s+in\s+share\s+mode\b`)
	// keyColumn is a column that names the lock.
	keyColumn = regexp.MustCompile(`(?i)^(?:name|key|id|key_id|lock_name|lock_key|lock_id|lockname|resource|resource_id|resource_name)$`)
	// expiryColumn is a column that holds an expiry.
	expiryColumn = regexp.MustCompile(`(?i)expir|until|deadline|valid_to`)
	placeholder  = regexp.MustCompile(`^(?:\?|\$\d+|:\w+)$`)
)

// bind is query with its placeholders ($n, or ? in order, outside quotes)
// replaced by params, quoted unless numbers.
func bind(query string, params []string) string {
	if len(params) == 0 {
		return query
	}
	quoteOf := func(i int) (string, bool) {
		if i < 0 || i >= len(params) {
			return "", false
		}
		if _, err := strconv.ParseFloat(params[i], 64); err == nil {
			return params[i], true
		}
		return "'" + strings.ReplaceAll(params[i], "'", "''") + "'", true
	}
	var b strings.Builder
	next, quote := 0, byte(0)
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '?':
			if v, ok := quoteOf(next); ok {
				b.WriteString(v)
				next++
				continue
			}
		case c == '$' && i+1 < len(query) && query[i+1] >= '0' && query[i+1] <= '9':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(query[i+1 : j])
			if v, ok := quoteOf(n - 1); ok {
				b.WriteString(v)
				i = j - 1
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// firstWord is the first word of q.
func firstWord(q string) string {
	if f := strings.Fields(q); len(f) > 0 {
		return f[0]
	}
	return ""
}

// literal is the value of a SQL literal: a string unquoted, anything else
// as written.
func literal(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return strings.ReplaceAll(s[1:len(s)-1], string(s[0])+string(s[0]), string(s[0]))
	}
	return s
}

// pair is a column and the expression written into it.
type pair struct{ col, value string }

var (
	insertShape = regexp.MustCompile(`(?i)^(?:insert|replace|upsert)\s+(?:ignore\s+)?(?:into\s+)?\S+\s*\(([^)]*)\)\s*values\s*\(`)
	updateShape = regexp.MustCompile(`(?i)^update\s+\S+\s+set\s+(.*?)(?:\s+where\s|$)`)
	whereShape  = regexp.MustCompile(`(?i)\swhere\s(.*)$`)
	// whereEquals is a condition column = literal.
	whereEquals = regexp.MustCompile(`(?i)(?:^|[\s(])(?:\w+\.)?[` + "`" + `"]?(\w+)[` + "`" + `"]?\s*=\s*('(?:[^']|'')*'|-?\d+)`)
)

// insertPairs are the columns of INSERT … (cols) VALUES (values) with their
// values; nil for another shape (INSERT … SELECT).
func insertPairs(q string) []pair {
	m := insertShape.FindStringSubmatchIndex(q)
	if m == nil {
		return nil
	}
	cols := splitTop(q[m[2]:m[3]])
	vals := luaArgs(q[m[1]:]) // up to the closing parenthesis
	if len(cols) != len(vals) {
		return nil
	}
	pairs := make([]pair, len(cols))
	for i := range cols {
		pairs[i] = pair{strings.Trim(cols[i], "`\" "), vals[i]}
	}
	return pairs
}

// updatePairs are the assignments of UPDATE t SET c = v, … WHERE ….
func updatePairs(q string) []pair {
	m := updateShape.FindStringSubmatch(q)
	if m == nil {
		return nil
	}
	var pairs []pair
	for _, a := range splitTop(m[1]) {
		if col, val, ok := strings.Cut(a, "="); ok {
			pairs = append(pairs, pair{strings.Trim(col, "`\" "), strings.TrimSpace(val)})
		}
	}
	return pairs
}

// splitTop splits s at its top-level commas.
func splitTop(s string) []string { return luaArgs(s + ")") }

// whereKey is the value the WHERE clause of q gives a name column
// ("name = 'x'"), or "" when it names none or by a placeholder.
func whereKey(q string) string {
	m := whereShape.FindStringSubmatch(q)
	if m == nil {
		return ""
	}
	key, rank := "", 0
	for _, c := range whereEquals.FindAllStringSubmatch(m[1], -1) {
		if keyRank(c[1]) > rank {
			key, rank = literal(c[2]), keyRank(c[1])
		}
	}
	return key
}

// keyRank says how surely column col names the lock: 2 for a name
// (name, key_id, lock_name …), 1 for id, which may be a row's number
// beside its name, 0 for another column.
func keyRank(col string) int {
	switch {
	case strings.EqualFold(col, "id"):
		return 1
	case keyColumn.MatchString(col):
		return 2
	}
	return 0
}

// rowWrite is what writing pairs into a row shows: Data when one column
// is an expiry, with the key of its name column and the lease of its
// expiry when they can be told.
func rowWrite(pairs []pair, q, from string) (Footprint, bool) {
	key, rank, expiry, lease := "", 0, false, time.Duration(0)
	for _, p := range pairs {
		d, isNow := nowPlus(p.value)
		switch {
		case keyRank(p.col) > rank && !placeholder.MatchString(p.value):
			key, rank = literal(p.value), keyRank(p.col)
		case isNow || expiryColumn.MatchString(p.col):
			if expiry && d != lease {
				d = 0 // two expiries: no one lease
			}
			expiry, lease = true, d
		}
	}
	if !expiry {
		return Footprint{}, false
	}
	if key == "" && strings.EqualFold(firstWord(q), "update") {
		key = whereKey(q)
	}
	return took(key, Data, lease, from), true
}

var (
	// now is the server's clock as a time, nowEpoch as Unix seconds.
	now      = `(?:now\(\d*\)|current_timestamp(?:\(\d*\))?|utc_timestamp(?:\(\d*\))?|sysdate\(\d*\)|localtimestamp(?:\(\d*\))?|clock_timestamp\(\)|statement_timestamp\(\)|transaction_timestamp\(\)|timezone\('utc',\s*(?:now\(\)|current_timestamp)\))`
	nowEpoch = `(?:unix_timestamp\((?:` + now + `)?\)|cast\(\s*extract\(\s*epoch\s+from\s+` + now + `\s*\)\s+as\s+\w+(?:\s+\w+)?\)|extract\(\s*epoch\s+from\s+` + now + `\s*\)|date_part\('epoch',\s*` + now + `\))`
	unit     = `(microseconds?|milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|hours?)`
	// nowPlusForms are now plus an interval, each with its amount and
	// unit as its first two groups (or the amount alone, in seconds).
	nowPlusForms = []*regexp.Regexp{
		regexp.MustCompile(`^` + now + `\s*\+\s*interval\s+'?(\d+)\s*` + unit + `'?$`),
		regexp.MustCompile(`^` + now + `\s*\+\s*interval\s+'(\d+)'\s*` + unit + `$`),
		regexp.MustCompile(`^` + now + `\s*\+\s*(?:cast\(\s*)?'(\d+)\s*` + unit + `'\s*(?:::\s*interval|as\s+interval\s*\))$`),
		regexp.MustCompile(`^` + now + `\s*\+\s*make_interval\(\s*(secs)\s*=>\s*(\d+)\s*\)$`),
		regexp.MustCompile(`^(?:date_add|adddate)\(\s*` + now + `\s*,\s*interval\s+'?(\d+)'?\s*` + unit + `\s*\)$`),
		regexp.MustCompile(`^timestampadd\(\s*` + unit + `\s*,\s*(\d+)\s*,\s*` + now + `\s*\)$`),
		regexp.MustCompile(`^` + nowEpoch + `\s*\+\s*(\d+)$`),
	}
	units = map[string]time.Duration{"microsecond": time.Microsecond, "millisecond": time.Millisecond, "ms": time.Millisecond,
		"second": time.Second, "sec": time.Second, "s": time.Second, "minute": time.Minute, "min": time.Minute, "hour": time.Hour, "secs": time.Second}
)

// nowPlus reads expression e as the server's now plus a constant: its
// interval, and whether it is such an expression.
func nowPlus(e string) (time.Duration, bool) {
	e = strings.ToLower(strings.TrimSpace(e))
	for _, re := range nowPlusForms {
		m := re.FindStringSubmatch(e)
		if m == nil {
			continue
		}
		amount, u := m[1], "s"
		if len(m) > 2 {
			amount, u = m[1], m[2]
		}
		if _, err := strconv.Atoi(amount); err != nil {
			amount, u = u, amount // TIMESTAMPADD and make_interval: the unit first
		}
		n, _ := strconv.ParseInt(amount, 10, 64)
		d, ok := units[strings.TrimSuffix(u, "s")]
		if !ok {
			d = units[u]
		}
		if n <= 0 || d == 0 {
			return 0, true
		}
		return time.Duration(n) * d, true
	}
	return 0, false
}
