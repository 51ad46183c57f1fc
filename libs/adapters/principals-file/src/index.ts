export { StaticPrincipalDirectory, sha256, type DirectoryData, type PrincipalEntry, type RoleEntry } from './static-principal-directory.js';
export { parsePrincipalsFile, demoDirectoryData, PrincipalsFileError } from './principals-file.js';
