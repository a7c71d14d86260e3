-- wrk script of scripts/pressure.sh: PUTs of BODY_BYTES bytes under unique keys (one per request), stops after COUNT.
local count = tonumber(os.getenv("COUNT") or "200000")
local token = os.getenv("TOKEN") or "pressure"
local body = string.rep("x", tonumber(os.getenv("BODY_BYTES") or "1024"))
local sent, done = 0, 0
local headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/octet-stream" }

request = function()
  sent = sent + 1
  return wrk.format("PUT", "/v1/cache/p:" .. sent, headers, body)
end

response = function(status)
  done = done + 1
  if done == count then
    -- wrk waits out its -d duration after a thread stops: the file tells pressure.sh to end it now.
    local file = io.open(os.getenv("DONE_FILE"), "w")
    file:close()
    wrk.thread:stop()
  end
end
