<?php
// Seed 004's RedisLock as a locklab lock program: SET NX EX with the time
// in whole seconds as the value; when that fails, GET the time, and if it
// is TTL seconds old, take the lock over with GETSET. The seed's code is
// kept as written, but for its retry loop: locklab retries a refusal.
// Talks locklab's line protocol on stdin/stdout (see program/).

class CommonRedis {
    private static $redis = null;

    public static function init() {
        if (self::$redis === null) {
            [$host, $port] = explode(':', getenv('LOCKLAB_REDIS'));
            $timeout = (int) getenv('LOCKLAB_TIMEOUT_MS') / 1000;
            $redis = new Redis();
            $redis->connect($host, (int) $port, $timeout);
            $redis->setOption(Redis::OPT_READ_TIMEOUT, $timeout);
            self::$redis = $redis;
        }
        return self::$redis;
    }

    // After an error the connection may be out of step: dial again.
    public static function reset() {
        self::$redis = null;
    }
}

class RedisLock {
    private $key;
    private $timeout;

    public function __construct($key, $timeout) {
        $this->key = $key;
        $this->timeout = $timeout;
    }

    public function lock() {
        return $this->doLock();
    }

    private function doLock() {
        $obj = CommonRedis::init();
        $rs = $obj->set($this->key, time(), array('nx', 'ex'=>$this->timeout));
        if($rs) {
            return true;
        }
        $lock_time = $obj->get($this->key);
        if(time() - $lock_time < $this->timeout) {
            return false;
        }
        $lock_time = $obj->getSet($this->key, time());
        if(time() - $lock_time < $this->timeout) {
            return false;
        }
        $obj->expire($this->key, $this->timeout);
        return true;
    }

    public function unLock() {
        $obj = CommonRedis::init();
        $lock_time = $obj->get($this->key);
        //如果锁已经超时,则不能再删除key了
        if(time() - $lock_time < $this->timeout) {
            return $obj->del($this->key);
        }
        return false;
    }
}

// The seed counts in whole seconds: the TTL, rounded up.
$timeout = max(1, intdiv((int) getenv('LOCKLAB_TTL_MS') + 999, 1000));
$held = [];
while (($line = fgets(STDIN)) !== false) {
    [$verb, $key] = explode(' ', trim($line), 2);
    try {
        if ($verb === 'acquire') {
            $lock = new RedisLock($key, $timeout);
            if ($lock->lock()) {
                $held[$key][] = $lock;
                $out = 'ok';
            } else {
                $out = 'refused';
            }
        } else {
            $lock = empty($held[$key]) ? null : array_pop($held[$key]);
            $out = ($lock !== null && $lock->unLock()) ? 'ok' : 'not-held';
        }
    } catch (RedisException $e) {
        CommonRedis::reset();
        $out = 'error ' . preg_replace('/\s+/', ' ', $e->getMessage());
    }
    echo $out, "\n";
    fflush(STDOUT);
}
