package relay

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// Bytes captured between MariaDB 10.11 and two clients: PHP's mysqlnd
// (PDO), which asks for no MariaDB extension and gets EOF packets, and
// libmariadb 3.3 (the mariadb command), which gets the metadata-follows
// byte of MARIADB_CLIENT_CACHE_METADATA.
const (
	myGreeting = "d\x00\x00\x00\n5.5.5-10.11.19-MariaDB-0+deb12u1\x00\x05\x00\x00\x00YY2..;}'\x00\xfe\xf7\b\x02\x00\xff\x81\x15\x00\x00\x00\x00\x00\x00\x1d\x00\x00\x00EfQDAYywk2T1\x00mysql_native_password\x00"
	myMysqlnd  = "q\x00\x00\x01\x8d\xa2\x1b\x00\x00\x00\x00\xc0\b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00root\x00\x00locklab\x00mysql_native_password\x00,\f_client_name\amysqlnd\f_server_host\t127.0.0.1"
	myLibmaria = "\xbc\x00\x00\x01\x84\xa2\xbf\x00\x00\x00\x10\x00!\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x1d\x00\x00\x00root\x00\x00mysql_native_password\x00\x7f\x03_os\x05Linux\f_client_name\nlibmariadb\x04_pid\x0530373\x0f_client_version\x063.3.20\t_platform\x06x86_64\fprogram_name\x05mysql\f_server_host\t127.0.0.1"
	myAuthOK   = "\a\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00"

	myGetLock      = "\x1c\x00\x00\x00\x03SELECT GET_LOCK('k', '0.5')"
	myGetLockReply = "\x01\x00\x00\x01\x01*\x00\x00\x02\x03def\x00\x00\x00\x14GET_LOCK('k', '0.5')\x00\f?\x00\x01\x00\x00\x00\x03\x80\x00\x00\x00\x00\x05\x00\x00\x03\xfe\x00\x00\x02\x00\x02\x00\x00\x04\x011\x05\x00\x00\x05\xfe\x00\x00\x02\x00"
	// libmariadb's SELECT 1: the column count 1, then metadata follows (1).
	myCachedReply = "\x02\x00\x00\x01\x01\x01\x18\x00\x00\x02\x03def\x00\x00\x00\x011\x00\x00\f?\x00\x01\x00\x00\x00\x03\x81\x00\x00\x00\x00\x05\x00\x00\x03\xfe\x00\x00\x02\x00\x02\x00\x00\x04\x011\x05\x00\x00\x05\xfe\x00\x00\x02\x00"
	// "SELECT 1; DO 2": a result set whose EOF says more results follow
	// (status 0x000a), then DO's OK.
	myMultiReply = "\x01\x00\x00\x01\x01\x17\x00\x00\x02\x03def\x00\x00\x00\x011\x00\f?\x00\x01\x00\x00\x00\x03\x81\x00\x00\x00\x00\x05\x00\x00\x03\xfe\x00\x00\n\x00\x02\x00\x00\x04\x011\x05\x00\x00\x05\xfe\x00\x00\n\x00\a\x00\x00\x06\x00\x00\x00\x02\x00\x00\x00"
	myErrReply   = "+\x00\x00\x01\xffz\x04#42S02Table 'locklab.nope' doesn't exist"
)

// Prepared statements, captured: mysqlnd (PDO without emulated prepares)
// gets EOF packets after the parameters and the columns; go-sql-driver
// (CLIENT_DEPRECATE_EOF and MariaDB's cached metadata) gets none, and a
// metadata-follows byte in the execute's column count. Rows are binary.
const (
	myPrepareMysqlnd = "\f\x00\x00\x01\x00\x01\x00\x00\x00\x01\x00\x01\x00\x00\x00\x00\x17\x00\x00\x02\x03def\x00\x00\x00\x01?\x00\f?\x00\x00\x00\x00\x00\x06\x80\x00\x00\x00\x00\x05\x00\x00\x03\xfe\x00\x00\x02\x00$\x00\x00\x04\x03def\x00\x00\x00\x0eGET_LOCK(?, 0)\x00\f?\x00\x01\x00\x00\x00\x03\x80\x00\x00\x00\x00\x05\x00\x00\x05\xfe\x00\x00\x02\x00"
	myExecuteMysqlnd = "\x01\x00\x00\x01\x01$\x00\x00\x02\x03def\x00\x00\x00\x0eGET_LOCK(?, 0)\x00\f?\x00\x01\x00\x00\x00\x03\x80\x00\x00\x00\x00\x05\x00\x00\x03\xfe\x00\x00\x02\x00\x06\x00\x00\x04\x00\x00\x01\x00\x00\x00\x05\x00\x00\x05\xfe\x00\x00\x02\x00"
	myPrepareGo      = "\f\x00\x00\x01\x00\x01\x00\x00\x00\x01\x00\x01\x00\x00\x00\x00\x17\x00\x00\x02\x03def\x00\x00\x00\x01?\x00\f?\x00\x00\x00\x00\x00\x06\x80\x00\x00\x00\x00$\x00\x00\x03\x03def\x00\x00\x00\x0eCONCAT(?, 'b')\x00\f-\x00\x04\x00\x00\x00\xfd\x00\x00'\x00\x00"
	myExecuteGo      = "\x02\x00\x00\x01\x01\x01$\x00\x00\x02\x03def\x00\x00\x00\x0eCONCAT(?, 'b')\x00\f-\x00\b\x00\x00\x00\xfd\x00\x00'\x00\x00\x05\x00\x00\x03\x00\x00\x02ab\a\x00\x00\x04\xfe\x00\x00\x02\x00\x00\x00"
	myPrepareGoDo    = "\f\x00\x00\x01\x00\x02\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x17\x00\x00\x02\x03def\x00\x00\x00\x01?\x00\f?\x00\x00\x00\x00\x00\x06\x80\x00\x00\x00\x00"
	myCapsGo         = 0x013aa28c
)

// TestReadMyPrepareReply: a prepare's reply is read whole, parameters and
// columns, with its statement's id; an error has no id.
func TestReadMyPrepareReply(t *testing.T) {
	for _, tt := range []struct {
		name, reply string
		caps        myCaps
		id          uint32
	}{
		{"mysqlnd", myPrepareMysqlnd, myCaps{flags: 0x1ba28d}, 1},
		{"go-sql-driver", myPrepareGo, myCaps{flags: myCapsGo, extended: 0x10}, 1},
		{"go-sql-driver, no columns", myPrepareGoDo, myCaps{flags: myCapsGo, extended: 0x10}, 2},
	} {
		const next = "\x05\x00\x00\x00\x03DO 1"
		r := bufio.NewReader(strings.NewReader(tt.reply + next))
		reply, id, err := readMyPrepareReply(r, tt.caps)
		if err != nil || string(reply) != tt.reply || id == nil || *id != tt.id {
			t.Errorf("%s: %q %v %v, want the reply whole and statement %d", tt.name, reply, id, err, tt.id)
		}
		if rest, _ := io.ReadAll(r); string(rest) != next {
			t.Errorf("%s: left %q, want the next command", tt.name, rest)
		}
	}
	reply, id, err := readMyPrepareReply(bufio.NewReader(strings.NewReader(myErrReply)), myCaps{flags: 0x1ba28d})
	if err != nil || id != nil || string(reply) != myErrReply {
		t.Errorf("error: %q %v %v", reply, id, err)
	}
}

// TestMyCaps: the flags the relay reads from a captured handshake: the
// 4.1 protocol, no EOF deprecation from mysqlnd, and MariaDB's extended
// flags only when neither side is MySQL's.
func TestMyCaps(t *testing.T) {
	greeting, _, err := readMyPacket(bufio.NewReader(strings.NewReader(myGreeting)))
	if err != nil {
		t.Fatal(err)
	}
	server, serverExt, ok := myServerCaps(greeting)
	if !ok || server&myClientProtocol41 == 0 || server&myClientMySQL != 0 || serverExt != 0x1d {
		t.Errorf("server: %#x %#x %v", server, serverExt, ok)
	}
	for _, tt := range []struct {
		name, raw string
		ext       uint32
	}{{"mysqlnd", myMysqlnd, 0}, {"libmariadb", myLibmaria, 0x1d}} {
		p, _, err := readMyPacket(bufio.NewReader(strings.NewReader(tt.raw)))
		if err != nil {
			t.Fatal(err)
		}
		flags, ext := myClientCaps(p)
		if flags&myClientDeprecateEOF != 0 || flags&myClientSSL != 0 || ext != tt.ext {
			t.Errorf("%s: %#x %#x", tt.name, flags, ext)
		}
	}
	if _, _, ok := myServerCaps([]byte("\xffz\x04#HY000no")); ok {
		t.Error("an error packet read as a greeting")
	}
}

// TestReadMyReply: a reply is read whole, to the packet that ends it and
// no further, in each form a client may have asked for; a server's error
// is its code and message.
func TestReadMyReply(t *testing.T) {
	mysqlnd := myCaps{flags: 0x1ba28d}
	libmaria := myCaps{flags: 0xbfa284, extended: 0x1d}
	deprecateEOF := myCaps{flags: 0x1ba28d | myClientDeprecateEOF}
	tests := []struct {
		name, reply string
		caps        myCaps
		serverErr   string
	}{
		{"result set", myGetLockReply, mysqlnd, ""},
		{"metadata follows", myCachedReply, libmaria, ""},
		{"metadata cached", "\x02\x00\x00\x01\x01\x00\x05\x00\x00\x02\xfe\x00\x00\x02\x00\x02\x00\x00\x03\x011\x05\x00\x00\x04\xfe\x00\x00\x02\x00", libmaria, ""},
		{"more results", myMultiReply, mysqlnd, ""},
		{"binary rows", myExecuteMysqlnd, mysqlnd, ""},
		{"binary rows, metadata follows, no EOF", myExecuteGo, myCaps{flags: myCapsGo, extended: 0x10}, ""},
		{"error", myErrReply, mysqlnd, "server error: 1146 Table 'locklab.nope' doesn't exist"},
		{"ok ends the rows", "\x01\x00\x00\x01\x01\x17\x00\x00\x02\x03def\x00\x00\x00\x011\x00\f?\x00\x01\x00\x00\x00\x03\x81\x00\x00\x00\x00\x02\x00\x00\x03\x011\x07\x00\x00\x04\xfe\x00\x00\x02\x00\x00\x00", deprecateEOF, ""},
		{"progress, then ok", "\x0c\x00\x00\x01\xff\xff\xff\x01\x01\x00\x00\x00\x00\x00\x00\x00" + myAuthOK[:3] + "\x02" + myAuthOK[4:], libmaria, ""},
		{"error in the rows", "\x01\x00\x00\x01\x01\x17\x00\x00\x02\x03def\x00\x00\x00\x011\x00\f?\x00\x01\x00\x00\x00\x03\x81\x00\x00\x00\x00\x05\x00\x00\x03\xfe\x00\x00\x02\x00" + "\x0f\x00\x00\x04\xff\x25\x05#70100killed", mysqlnd, "server error: 1317 killed"},
	}
	for _, tt := range tests {
		const next = "\x05\x00\x00\x00\x03DO 1"
		r := bufio.NewReader(strings.NewReader(tt.reply + next))
		reply, serverErr, err := readMyReply(r, tt.caps)
		if err != nil || string(reply) != tt.reply {
			t.Errorf("%s: %q %v, want the reply whole", tt.name, reply, err)
		}
		if got := errText(serverErr); got != tt.serverErr {
			t.Errorf("%s: server error %q, want %q", tt.name, got, tt.serverErr)
		}
		if rest, _ := io.ReadAll(r); string(rest) != next {
			t.Errorf("%s: left %q, want the next command", tt.name, rest)
		}
	}
	// Cut short: the connection broke inside the reply.
	_, _, err := readMyReply(bufio.NewReader(strings.NewReader(myGetLockReply[:40])), mysqlnd)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a reply cut short: %v, want an unexpected EOF", err)
	}
	// LOCAL INFILE asks the client for a file: the relay does not read on.
	_, _, err = readMyReply(bufio.NewReader(strings.NewReader("\x06\x00\x00\x01\xfb/tmp/x")), mysqlnd)
	if !errors.Is(err, errMyUnread) {
		t.Errorf("LOCAL INFILE: %v, want errMyUnread", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestReadMyPacket: a packet is read with its header; one of 16 MB is
// continued by the next; a packet cut short is an unexpected EOF.
func TestReadMyPacket(t *testing.T) {
	p, raw, err := readMyPacket(bufio.NewReader(strings.NewReader(myGetLock)))
	if err != nil || string(raw) != myGetLock || string(p) != "\x03SELECT GET_LOCK('k', '0.5')" {
		t.Errorf("%q %q %v", p, raw, err)
	}
	if _, _, err := readMyPacket(bufio.NewReader(strings.NewReader(myGetLock[:10]))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut short: %v", err)
	}
	if _, _, err := readMyPacket(bufio.NewReader(strings.NewReader(""))); err != io.EOF {
		t.Errorf("nothing: %v, want EOF", err)
	}
	big := "\xff\xff\xff\x00\x03" + strings.Repeat("x", 0xffffff-1) + "\x02\x00\x00\x01yz"
	p, raw, err = readMyPacket(bufio.NewReader(strings.NewReader(big)))
	if err != nil || len(p) != 0xffffff+2 || len(raw) != len(big) || !strings.HasSuffix(string(p), "xyz") {
		t.Errorf("continued: %d bytes, %d raw, %v", len(p), len(raw), err)
	}
}
