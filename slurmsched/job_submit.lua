-- job_submit.lua: optsched's hold guard for Slurm (JobSubmitPlugins=lua).
-- Shipped by optsched (optsched slurm hold-guard prints it); see
-- docs/slurm.md. Install it as job_submit.lua beside slurm.conf.
--
-- Every new job is held (priority 0, Reason=JobHeldUser), so that
-- slurmctld's own schedulers never start a job by themselves: optsched
-- places a held job (scontrol update ReqNodeList=... NumNodes=k-k) and
-- releases it, as root. A user may not release a job or change its
-- priority or nice value: in Slurm 22.05 a user's Nice change on a held
-- job recomputes its priority and so releases it. Root (and SlurmUser)
-- may do all of these. Time limit changes and scancel stay allowed.
--
-- HOLD_PARTITIONS: when not empty, only jobs submitted to these
-- partitions are held; a job that names no partition goes to
-- DEFAULT_PARTITION. Empty: every job is held.
HOLD_PARTITIONS = {}
DEFAULT_PARTITION = ""

local function held_partition(part)
	if next(HOLD_PARTITIONS) == nil then
		return true
	end
	if part == nil or part == "" then
		part = DEFAULT_PARTITION
	end
	-- A job may name several partitions ("a,b"): held when any is ours.
	for p in string.gmatch(part, "[^,]+") do
		for _, q in ipairs(HOLD_PARTITIONS) do
			if p == q then
				return true
			end
		end
	end
	return false
end

local function is_set(v)
	return v ~= nil and v ~= slurm.NO_VAL and v ~= slurm.NO_VAL16 and v ~= slurm.NO_VAL64
end

function slurm_job_submit(job_desc, part_list, submit_uid)
	if held_partition(job_desc.partition) then
		job_desc.priority = 0
	end
	return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	if modify_uid == 0 then
		return slurm.SUCCESS
	end
	if is_set(job_desc.priority) or is_set(job_desc.nice) then
		slurm.log_user("optsched: jobs are started by the external scheduler only; a job's priority and nice value cannot be changed by its owner")
		return slurm.ERROR
	end
	if job_desc.partition ~= nil and held_partition(job_rec.partition) and not held_partition(job_desc.partition) then
		slurm.log_user("optsched: a job cannot leave optsched's partitions")
		return slurm.ERROR
	end
	return slurm.SUCCESS
end
