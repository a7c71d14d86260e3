-- wrk script of scripts/pressure.sh: requests for USERS users' subscription, the users in turn.
local users = tonumber(os.getenv("USERS") or "50")
local i = 0

request = function()
  i = i + 1
  return wrk.format("GET", "/v1/users/u" .. i % users .. "/subscription")
end
