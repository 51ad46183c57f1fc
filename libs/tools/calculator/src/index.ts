export { calculatorTool, calculatorManifest, calculate, MAX_EXPRESSION_LENGTH } from './calculator.tool.js';
