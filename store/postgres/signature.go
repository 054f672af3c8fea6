package postgres

// migrationSignature adds the fleet key's signature to every task row
// (package sign); rows from before it have none until an engine that
// creates the key signs them.
const migrationSignature = `
ALTER TABLE tasks ADD COLUMN signature text NOT NULL DEFAULT '';
`
