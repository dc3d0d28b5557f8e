-- Up Migration
-- A key that may read and change rules but nothing else (docs/tenancy.md, "Authentication"): what a fraud team
-- hands the tool that tunes its rules, without the power to deploy, upgrade, rescale or mint keys.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('read', 'write', 'rules'));

-- Down Migration
UPDATE api_keys SET revoked_at = now() WHERE scope = 'rules' AND revoked_at IS NULL;
UPDATE api_keys SET scope = 'read' WHERE scope = 'rules';
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('read', 'write'));
