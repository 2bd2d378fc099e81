-- wrk script: a fixed request rate, paced like wrk2 (which Debian does not ship).
-- Arguments: the total rate in requests/s, and the number of wrk threads.
-- Each thread owns rate/threads of the load: before every request wrk calls delay(), which
-- returns the milliseconds until the thread's next send slot (slots are 1000*threads/rate ms
-- apart), so requests leave at the target rate whatever the latency, as long as a connection is
-- free. A connection waits for its response before it is free again (closed loop), so use more
-- connections than requests in flight (rate x latency). A thread more than 50 ms behind its
-- schedule skips the missed slots instead of bursting.
local ffi = require("ffi")
ffi.cdef([[
typedef struct { long tv_sec; long tv_nsec; } fixed_rate_timespec;
int clock_gettime(int clock_id, fixed_rate_timespec *tp);
]])
local CLOCK_MONOTONIC = 1
local ts = ffi.new("fixed_rate_timespec")

local function now_ms()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local period_ms = 1
local next_ms = nil

function init(args)
  local rate = tonumber(args[1])
  local threads = tonumber(args[2] or "1")
  period_ms = 1000 * threads / rate
end

function delay()
  local now = now_ms()
  if next_ms == nil or next_ms < now - 50 then
    next_ms = now
  end
  local wait = next_ms - now
  next_ms = next_ms + period_ms
  return math.floor(wait + 0.5)
end
