import ts from 'typescript';

/** One declaration of a port file that has no TSDoc comment of its own. */
export interface UndocumentedDeclaration {
  /** Dotted path of the declaration, e.g. `AuditSink.append` or `AuditReport.fault.reason`. */
  readonly name: string;
  /** 1-based line of the declaration. */
  readonly line: number;
}

/**
 * Every exported declaration of a port file (interface, class, type, function, token or other
 * constant) and every member a reader of the port meets (interface members, members of object types
 * nested in them, public class members and constructor parameter properties, members of an exported
 * object constant) that lacks a `/** … *\/` comment with text in it.
 *
 * Exempt, because their meaning is the language's or the parent's: constructors, `override`
 * members (an error class's `name`), private and protected members, and `#private` fields.
 * A `//` comment is not TSDoc: editors and the API docs never show it. A syntax error is reported
 * as a finding too, since the parser's recovery could otherwise hide members (an unclosed comment
 * swallows the declaration after it).
 */
export function undocumentedDeclarations(sourceText: string, fileName = 'port.ts'): UndocumentedDeclaration[] {
  const source = ts.createSourceFile(fileName, sourceText, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const missing: UndocumentedDeclaration[] = syntaxErrors(sourceText, fileName);
  const require = (node: ts.Node, name: string): void => {
    if (!hasTsDoc(node)) missing.push({ name, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };

  for (const statement of source.statements) {
    if (!isExported(statement)) continue;
    if (ts.isInterfaceDeclaration(statement)) {
      require(statement, statement.name.text);
      checkTypeMembers(statement.members, statement.name.text, require);
    } else if (ts.isClassDeclaration(statement) && statement.name) {
      require(statement, statement.name.text);
      checkClassMembers(statement, statement.name.text, require);
    } else if (ts.isTypeAliasDeclaration(statement)) {
      require(statement, statement.name.text);
      if (ts.isTypeLiteralNode(statement.type)) checkTypeMembers(statement.type.members, statement.name.text, require);
    } else if (ts.isFunctionDeclaration(statement) && statement.name) {
      require(statement, statement.name.text);
    } else if (ts.isEnumDeclaration(statement)) {
      require(statement, statement.name.text);
      for (const member of statement.members) require(member, `${statement.name.text}.${member.name.getText(source)}`);
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        const name = declaration.name.getText(source);
        // The comment of `export const X = …` sits on the statement, not on the declaration.
        require(statement, name);
        const value = declaration.initializer && unwrapAssertions(declaration.initializer);
        if (value && ts.isObjectLiteralExpression(value)) {
          for (const property of value.properties) {
            if (property.name) require(property, `${name}.${property.name.getText(source)}`);
          }
        }
      }
    }
  }
  return missing;
}

function syntaxErrors(sourceText: string, fileName: string): UndocumentedDeclaration[] {
  const { diagnostics = [] } = ts.transpileModule(sourceText, { fileName, reportDiagnostics: true, compilerOptions: { noResolve: true } });
  return diagnostics.map((diagnostic) => ({
    name: `syntax error: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`,
    line: diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 0,
  }));
}

function checkTypeMembers(members: ts.NodeArray<ts.TypeElement>, parent: string, require: (node: ts.Node, name: string) => void): void {
  for (const member of members) {
    const name = member.name ? `${parent}.${member.name.getText()}` : `${parent}[${ts.SyntaxKind[member.kind]}]`;
    require(member, name);
    // `readonly fault?: { readonly reason: string }`: the nested fields are part of the port too.
    if (ts.isPropertySignature(member) && member.type) {
      const inner = member.type;
      if (ts.isTypeLiteralNode(inner)) checkTypeMembers(inner.members, name, require);
    }
  }
}

function checkClassMembers(declaration: ts.ClassDeclaration, parent: string, require: (node: ts.Node, name: string) => void): void {
  for (const member of declaration.members) {
    if (ts.isConstructorDeclaration(member)) {
      for (const parameter of member.parameters) {
        // `constructor(readonly setting: string)` declares a public member.
        if (isPublicParameterProperty(parameter)) require(parameter, `${parent}.${parameter.name.getText()}`);
      }
      continue;
    }
    if (ts.isClassStaticBlockDeclaration(member) || ts.isSemicolonClassElement(member)) continue;
    if (!isPublicOwnMember(member)) continue;
    require(member, `${parent}.${member.name?.getText() ?? '?'}`);
  }
}

function isPublicParameterProperty(parameter: ts.ParameterDeclaration): boolean {
  const modifiers = ts.getModifiers(parameter) ?? [];
  const declares = modifiers.some((m) => [ts.SyntaxKind.ReadonlyKeyword, ts.SyntaxKind.PublicKeyword].includes(m.kind));
  const hidden = modifiers.some((m) => [ts.SyntaxKind.PrivateKeyword, ts.SyntaxKind.ProtectedKeyword].includes(m.kind));
  return declares && !hidden;
}

function isPublicOwnMember(member: ts.ClassElement): boolean {
  if (member.name && ts.isPrivateIdentifier(member.name)) return false;
  const modifiers = ts.canHaveModifiers(member) ? (ts.getModifiers(member) ?? []) : [];
  return !modifiers.some((m) =>
    [ts.SyntaxKind.PrivateKeyword, ts.SyntaxKind.ProtectedKeyword, ts.SyntaxKind.OverrideKeyword].includes(m.kind),
  );
}

function isExported(statement: ts.Statement): boolean {
  const modifiers = ts.canHaveModifiers(statement) ? (ts.getModifiers(statement) ?? []) : [];
  return modifiers.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

function unwrapAssertions(expression: ts.Expression): ts.Expression {
  let current = expression;
  while (ts.isAsExpression(current) || ts.isSatisfiesExpression(current) || ts.isParenthesizedExpression(current)) {
    current = current.expression;
  }
  return current;
}

/** A `/** … *\/` comment directly attached to `node` that says something. */
function hasTsDoc(node: ts.Node): boolean {
  return ts.getJSDocCommentsAndTags(node).some((doc) => ts.isJSDoc(doc) && docText(doc).trim().length > 0);
}

function docText(doc: ts.JSDoc): string {
  const comment = typeof doc.comment === 'string' ? doc.comment : (doc.comment ?? []).map((part) => part.text).join('');
  const tags = (doc.tags ?? []).map((tag) => (typeof tag.comment === 'string' ? tag.comment : (tag.comment ?? []).map((part) => part.text).join('')));
  return [comment, ...tags].join(' ');
}
