-- wrk: POST a fixed JSON body (its size in bytes is the script's first argument).
function init(args)
  local size = tonumber(args[1] or "1024")
  local pad = string.rep("x", math.max(0, size - 40))
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = '{"resourceType":"Observation","p":"' .. pad .. '"}'
end
