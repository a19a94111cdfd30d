<?php
// MariaDB's named lock, GET_LOCK, in PHP with PDO (Debian's php-mysql).
//
// GET_LOCK(KEY, T) takes it and RELEASE_LOCK(KEY) gives it back, both on
// the one connection the program keeps: the server grants the lock to that
// connection and frees it when the connection ends (a crash, KILL), while
// the holder, if it lives, still believes it holds it. T is half the
// client's timeout, as the catalogue's get-lock waits, so that the
// server's "no" comes before the read timeout would make the outcome
// unknown. Its verdicts are those of get-lock (TestGetLockPHPIsGetLock).
// A connection whose request broke is closed, which frees any lock it
// held, and the next request opens another.
//
// It reads LOCKLAB_MYSQL (mysql://USER[:PASSWORD]@HOST:PORT/locklab,
// through this client's relay and link), LOCKLAB_TIMEOUT_MS and
// LOCKLAB_CLIENT, and speaks locklab's line protocol on stdin and stdout.
// PDO's emulated prepares (its default on MySQL) send each statement as
// one COM_QUERY, which locklab's relay reads and strikes; with
// --server-prepares the server prepares it (COM_STMT_PREPARE, then
// COM_STMT_EXECUTE, which the relay strikes as well).
//
//   go run ./cmd/check -lock exec:'php programs/mariadb-get-lock.php' -service mariadb

function connect(string $url, int $timeoutMs, bool $emulate): PDO {
    $u = parse_url($url);
    // mysqlnd counts whole seconds, one at least.
    $seconds = max(1, intdiv($timeoutMs + 999, 1000));
    ini_set('mysqlnd.net_read_timeout', (string) $seconds);
    $dsn = sprintf('mysql:host=%s;port=%d;dbname=%s', $u['host'], $u['port'], ltrim($u['path'], '/'));
    return new PDO($dsn, urldecode($u['user']), urldecode($u['pass'] ?? ''), [
        PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
        PDO::ATTR_EMULATE_PREPARES => $emulate,
        PDO::ATTR_TIMEOUT => $seconds,
    ]);
}

function answer(?PDO &$db, string $url, int $timeoutMs, bool $emulate, string $verb, string $key): string {
    if ($db === null) {
        $db = connect($url, $timeoutMs, $emulate);
    }
    if ($verb === 'acquire') {
        $st = $db->prepare('SELECT GET_LOCK(?, ?)');
        $st->execute([$key, $timeoutMs / 2000]);
        $got = $st->fetchColumn();
        if ($got === null) {
            return 'error GET_LOCK returned NULL';
        }
        return (int) $got === 1 ? 'ok' : 'refused';
    }
    $st = $db->prepare('SELECT RELEASE_LOCK(?)');
    $st->execute([$key]);
    // 0: another connection holds it; NULL: nobody does.
    return $st->fetchColumn() == 1 ? 'ok' : 'not-held';
}

$url = getenv('LOCKLAB_MYSQL');
$timeoutMs = (int) getenv('LOCKLAB_TIMEOUT_MS');
$emulate = !in_array('--server-prepares', $argv, true);
$db = null;
while (($line = fgets(STDIN)) !== false) {
    [$verb, $key] = array_pad(explode(' ', trim($line), 2), 2, '');
    if ($verb !== 'acquire' && $verb !== 'release') {
        fwrite(STDOUT, "error unknown request $verb\n");
        continue;
    }
    try {
        $out = answer($db, $url, $timeoutMs, $emulate, $verb, $key);
    } catch (PDOException $e) {
        // Its lock state is unknown: end the connection, and its lock.
        $db = null;
        $out = 'error ' . str_replace("\n", ' ', $e->getMessage());
    }
    fwrite(STDOUT, $out . "\n");
}
