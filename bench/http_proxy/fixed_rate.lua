-- wrk script: a fixed request rate. After each response a connection waits `interval` ms
-- (first script argument, default 10) before its next request, so C connections send about
-- C * 1000 / (interval + latency) requests per second. Latency is measured from the send.
local interval = 10

function init(args)
  if args[1] ~= nil then
    interval = tonumber(args[1])
  end
end

function delay()
  return interval
end
