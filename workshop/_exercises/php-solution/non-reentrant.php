<?php
// The reference solution of the non-reentrant exercise: the renewing token
// lock, and a count of this client's holds of each key, so that taking the
// lock again while holding it counts one more hold and only the last release
// deletes the key.
// A locklab lock program: it answers `acquire KEY` and `release KEY` on
// stdin/stdout, one line each.

$ttlMs = (int) getenv('LOCKLAB_TTL_MS');
$timeout = (int) (getenv('LOCKLAB_TIMEOUT_MS') ?: 1000) / 1000;
$me = 'client-' . (getenv('LOCKLAB_CLIENT') ?: '0');
$redis = null;

// connection dials the master: LOCKLAB_REDIS, or the one Sentinel names.
function connection() {
    global $redis, $timeout;
    if ($redis !== null) {
        return $redis;
    }
    $addr = getenv('LOCKLAB_REDIS');
    if (getenv('LOCKLAB_SENTINELS')) {
        foreach (explode(',', getenv('LOCKLAB_SENTINELS')) as $s) {
            [$host, $port] = explode(':', $s);
            try {
                $master = (new RedisSentinel($host, (int) $port, $timeout))->getMasterAddrByName(getenv('LOCKLAB_MASTER'));
                if ($master) {
                    $addr = $master[0] . ':' . $master[1];
                    break;
                }
            } catch (RedisException $e) {
                // ask the next Sentinel
            }
        }
    }
    [$host, $port] = explode(':', $addr);
    $r = new Redis();
    $r->connect($host, (int) $port, $timeout);
    $r->setOption(Redis::OPT_READ_TIMEOUT, $timeout);
    return $redis = $r;
}

const RELEASE = 'if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0';
const RENEW = 'if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0';

$acquires = 0;
$held = []; // key => token
$holds = []; // key => how many times this client holds it

function acquire($key) {
    global $acquires, $held, $holds, $me, $ttlMs;
    if (isset($held[$key])) {
        $holds[$key]++; // one client is one owner: take it once more
        return 'ok';
    }
    $acquires++;
    $token = "$me-$acquires";
    $start = hrtime(true);
    if (!connection()->set($key, $token, ['nx', 'px' => $ttlMs])) {
        return 'refused';
    }
    if (hrtime(true) - $start > $ttlMs * 1e6 / 2) {
        // The reply came so late that the lease may be gone already (a
        // pause, a loaded machine): give back a lock we cannot trust.
        connection()->eval(RELEASE, [$key, $token], 1);
        return 'refused';
    }
    $held[$key] = $token;
    $holds[$key] = 1;
    return 'ok';
}

function release($key) {
    global $held, $holds;
    if (!isset($held[$key])) {
        return 'not-held';
    }
    if (--$holds[$key] > 0) {
        return 'ok';
    }
    $token = $held[$key];
    unset($held[$key]);
    return connection()->eval(RELEASE, [$key, $token], 1) == 1 ? 'ok' : 'not-held';
}

// renew extends every lease this client holds; PHP has no threads, so it
// runs whenever stdin has been quiet for a third of the lease.
function renew() {
    global $held, $ttlMs;
    foreach ($held as $key => $token) {
        if (connection()->eval(RENEW, [$key, $token, $ttlMs], 1) == 0) {
            unset($held[$key]); // lost it: nothing left to renew
        }
    }
}

$nextRenewal = microtime(true) + $ttlMs / 3000;
while (true) {
    $read = [STDIN];
    $write = $except = null;
    $wait = max(0, $nextRenewal - microtime(true));
    $ready = @stream_select($read, $write, $except, 0, (int) ($wait * 1e6));
    // On time, however busy stdin is: a client that keeps asking for a
    // lock it holds must still renew it.
    if (microtime(true) >= $nextRenewal) {
        $nextRenewal = microtime(true) + $ttlMs / 3000;
        try {
            renew();
        } catch (RedisException $e) {
            $redis = null; // dial again at the next command
        }
    }
    try {
        if ($ready === 0) {
            continue;
        }
        $line = fgets(STDIN);
        if ($line === false) {
            break;
        }
        [$verb, $key] = explode(' ', trim($line));
        $out = $verb === 'acquire' ? acquire($key) : release($key);
    } catch (RedisException $e) {
        $redis = null; // the connection may be out of step: dial again
        $out = 'error ' . preg_replace('/\s+/', ' ', $e->getMessage());
    }
    echo $out, "\n";
}
