-- 0017: console logins are unique per scope (docs/console.md, "Logins are
-- per scope"), not across the whole console. Before, a merchant admin
-- creating a user named like a house user or another merchant's user was
-- told "exists" and so learnt that the login is taken elsewhere (issue 27,
-- 8a). Now each merchant, and the house (merchant_id null, taken as 0), has
-- its own logins; the login form names the scope with a shop number (empty
-- for the house), so two users of one login never compete for a sign-in.
alter table console_users drop constraint console_users_login_key;
create unique index console_users_scope_login_key on console_users (coalesce(merchant_id, 0), login);
